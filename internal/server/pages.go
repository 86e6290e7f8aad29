package server

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/web"
)

// render writes a templ component as an HTML page; templ escapes every
// value it interpolates.
func render(c echo.Context, status int, page templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return page.Render(c.Request().Context(), c.Response())
}

func (s *Server) home(c echo.Context) error {
	return render(c, http.StatusOK, web.Home())
}
