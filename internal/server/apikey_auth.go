package server

import (
	"fmt"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apikey"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
)

// caller is an authenticated API key: the tenant and environment it may
// write to.
type caller struct {
	apiKeyID      int64
	tenantID      int64
	environmentID int64
}

func (c caller) actor() string { return fmt.Sprintf("api_key:%d", c.apiKeyID) }

var errBadAPIKey = apperr.New(apperr.Unauthorized, "unauthorized",
	"send a valid API key as 'Authorization: Bearer <key>' (or as the password of HTTP Basic authentication)")

// bearerKeyHash returns the hash of the request's API key, the form in
// which keys are looked up. The key comes as a Bearer token, or as the
// password of HTTP Basic authentication (any user name): an SAP HTTP
// destination (SM59, type G) can send Basic credentials but no Bearer
// token, so that SAP reaches edihub without middleware.
func bearerKeyHash(c echo.Context) ([]byte, error) {
	scheme, token, ok := strings.Cut(c.Request().Header.Get(echo.HeaderAuthorization), " ")
	token = strings.TrimSpace(token)
	switch {
	case !ok || token == "":
		return nil, errBadAPIKey
	case strings.EqualFold(scheme, "Bearer"):
	case strings.EqualFold(scheme, "Basic"):
		_, password, ok := c.Request().BasicAuth()
		if !ok || password == "" {
			return nil, errBadAPIKey
		}
		token = password
	default:
		return nil, errBadAPIKey
	}
	hash := apikey.Hash(token)
	return hash[:], nil
}

// authenticateWithMessageTypes checks the request's Bearer API key and
// returns, from the same query, the message types of the key's tenant, so
// that receive-message needs one round trip for both (see
// APIKeyGetWithMessageTypes).
func (s *Server) authenticateWithMessageTypes(c echo.Context) (caller, []db.MessageType, error) {
	hash, err := bearerKeyHash(c)
	if err != nil {
		return caller{}, nil, err
	}
	rows, err := db.New(s.pool).APIKeyGetWithMessageTypes(c.Request().Context(), hash)
	if err != nil {
		return caller{}, nil, fmt.Errorf("look up api key: %w", err)
	}
	if len(rows) == 0 {
		return caller{}, nil, errBadAPIKey
	}
	var types []db.MessageType
	for _, r := range rows {
		if mt, ok := r.MessageType(); ok {
			types = append(types, mt)
		}
	}
	who := caller{apiKeyID: rows[0].ID, tenantID: rows[0].TenantID, environmentID: rows[0].EnvironmentID}
	return who, types, nil
}

// authenticateAPIKey checks the request's Bearer API key.
func (s *Server) authenticateAPIKey(c echo.Context) (caller, error) {
	hash, err := bearerKeyHash(c)
	if err != nil {
		return caller{}, err
	}
	row, err := db.New(s.pool).APIKeyGetByHash(c.Request().Context(), hash)
	if db.IsNotFound(err) {
		return caller{}, errBadAPIKey
	}
	if err != nil {
		return caller{}, fmt.Errorf("look up api key: %w", err)
	}
	return caller{apiKeyID: row.ID, tenantID: row.TenantID, environmentID: row.EnvironmentID}, nil
}
