package server

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/sender"
)

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
