package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/dashboard"
	"github.com/lefia/edihub/web"
)

// adminDashboard shows the dashboard of the user's scope, narrowed to one
// tenant by ?tenant=<slug> (global users; a tenant's user only sees their
// own anyway), under the alerts of the scope that are not resolved.
func (s *Server) adminDashboard(c echo.Context) error {
	ctx, scope := c.Request().Context(), currentUser(c).Scope()
	d, err := dashboard.New(s.readPool(c)).Load(ctx, scope, strings.TrimSpace(c.QueryParam("tenant")), time.Now())
	if err != nil {
		return err
	}
	alerts, err := s.alerts.Unresolved(ctx, scope)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.AdminDashboard(page(c, "Dashboard", web.SectionDashboard), d, alerts))
}
