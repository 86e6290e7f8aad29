package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/auditlog"
	"github.com/lefia/edihub/web"
)

// adminAudit shows a page of the audit log, filtered as its URL says.
func (s *Server) adminAudit(c echo.Context) error {
	f := auditlog.FilterFromQuery(c.QueryParams())
	pg, err := auditlog.New(s.readPool(c)).List(c.Request().Context(), currentUser(c).Scope(), f)
	if err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") == "true" {
		// htmx pushes this into the address bar instead of the form's raw
		// query, which lists every empty field.
		c.Response().Header().Set("HX-Push-Url", f.URL())
	}
	return render(c, http.StatusOK, web.AdminAudit(page(c, "Audit log", web.SectionAudit), f, pg))
}
