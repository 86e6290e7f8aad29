package server

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

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

// contentSecurityPolicy allows the pages only their own scripts, styles,
// images and form targets: no inline script, so an injected <script> or
// onerror attribute cannot run even if escaping ever failed, and no framing
// (against clickjacking).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// securityHeaders sets the browser protections of every answer.
func securityHeaders() echo.MiddlewareFunc {
	return middleware.SecureWithConfig(middleware.SecureConfig{
		ContentTypeNosniff:    "nosniff",
		XFrameOptions:         "DENY",
		ContentSecurityPolicy: contentSecurityPolicy,
		ReferrerPolicy:        "same-origin",
	})
}
