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
	"send a valid API key as 'Authorization: Bearer <key>'")

// authenticateAPIKey checks the request's Bearer API key.
func (s *Server) authenticateAPIKey(c echo.Context) (caller, error) {
	scheme, token, ok := strings.Cut(c.Request().Header.Get(echo.HeaderAuthorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return caller{}, errBadAPIKey
	}
	hash := apikey.Hash(strings.TrimSpace(token))
	row, err := db.New(s.pool).APIKeyGetByHash(c.Request().Context(), hash[:])
	if db.IsNotFound(err) {
		return caller{}, errBadAPIKey
	}
	if err != nil {
		return caller{}, fmt.Errorf("look up api key: %w", err)
	}
	return caller{apiKeyID: row.ID, tenantID: row.TenantID, environmentID: row.EnvironmentID}, nil
}
