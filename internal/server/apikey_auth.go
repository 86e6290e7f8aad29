package server

import (
	"errors"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/sender"
	"github.com/lefia/edihub/internal/throttle"
)

// A client whose API keys keep failing may fail keyFailureBurst times at
// once, then once every keyFailureInterval, before it is refused with 429
// for as long as it takes to pay that off: a sender whose key was revoked
// learns it from the first answers, and more failures from one address
// are guesses or a loop. Without the limit one client had 820 keys looked
// up a second. keyFailureClients bounds the addresses remembered (about
// 100 bytes each).
const (
	keyFailureBurst    = 10
	keyFailureInterval = time.Second
	keyFailureClients  = 10_000
)

func newKeyFailures() *throttle.Failures {
	return throttle.New(keyFailureBurst, keyFailureInterval, keyFailureClients)
}

// withAPIKey runs authenticate on the request's API key, unless the
// client's address failed too often lately (see keyFailureBurst): then the
// request is refused before anything is looked up, valid key or not, so
// that waiting is the only way on. Only a key that is missing or not valid
// counts as a failure; a client whose keys work is never held up. The
// address is the one the login throttle uses (TRUSTED_PROXIES).
func (s *Server) withAPIKey(c echo.Context, authenticate func(key string) error) error {
	addr := c.RealIP()
	if wait := s.keyFailures.Wait(addr); wait > 0 {
		return &apperr.Error{
			Kind: apperr.TooManyRequests, Type: "too-many-attempts", RetryAfter: wait,
			Detail: "too many requests from this address came without a valid API key: wait as long as Retry-After says, then send a valid one",
		}
	}
	key, err := apiKeyOf(c)
	if err == nil {
		err = authenticate(key)
	}
	if errors.Is(err, sender.ErrBadAPIKey) {
		s.keyFailures.Fail(addr)
	}
	return err
}

// apiKeyOf returns the request's API key, which package sender looks up.
// The key comes as a Bearer token, or as the password of HTTP Basic
// authentication (any user name): an SAP HTTP destination (SM59, type G)
// can send Basic credentials but no Bearer token, so that SAP reaches
// edihub without middleware.
func apiKeyOf(c echo.Context) (string, error) {
	scheme, token, ok := strings.Cut(c.Request().Header.Get(echo.HeaderAuthorization), " ")
	token = strings.TrimSpace(token)
	switch {
	case !ok || token == "":
		return "", sender.ErrBadAPIKey
	case strings.EqualFold(scheme, "Bearer"):
		return token, nil
	case strings.EqualFold(scheme, "Basic"):
		_, password, ok := c.Request().BasicAuth()
		if !ok || password == "" {
			return "", sender.ErrBadAPIKey
		}
		return password, nil
	default:
		return "", sender.ErrBadAPIKey
	}
}
