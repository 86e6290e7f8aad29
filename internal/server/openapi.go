package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/openapi"
)

// openAPIDocument serves the ingest API's OpenAPI document.
func (s *Server) openAPIDocument(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", openapi.Document)
}
