package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/openapi"
	"github.com/lefia/edihub/web"
)

// openAPIDocument serves the ingest API's OpenAPI document.
func (s *Server) openAPIDocument(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", openapi.Document)
}

// apiDocsPolicy is the pages' Content Security Policy as the API reference
// needs it: Redoc writes its styles into style elements (styled-components)
// and runs its search in a worker made from a blob. Scripts stay the
// server's own files.
const apiDocsPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; worker-src blob:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// apiDocs serves the API reference page, rendered from openAPIDocument by
// the vendored Redoc.
func (s *Server) apiDocs(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderContentSecurityPolicy, apiDocsPolicy)
	return render(c, http.StatusOK, web.APIDocs())
}
