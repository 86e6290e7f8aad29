package server

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/alert"
	"github.com/lefia/edihub/web"
)

// adminAlerts shows a page of alerts, filtered as its URL says.
func (s *Server) adminAlerts(c echo.Context) error {
	f := alert.FilterFromQuery(c.QueryParams())
	pg, err := s.alerts.List(c.Request().Context(), currentUser(c).Scope(), f)
	if err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") == "true" && c.Request().Header.Get("HX-Target") == "results" {
		// htmx pushes this into the address bar instead of the form's raw
		// query, which lists every empty field.
		c.Response().Header().Set("HX-Push-Url", f.URL())
	}
	return render(c, http.StatusOK, web.AdminAlerts(page(c, "Alerts", web.SectionAlerts), web.Alerts{Filter: f, Page: pg}))
}

// adminAlert shows one alert within the user's scope.
func (s *Server) adminAlert(c echo.Context) error {
	id, err := idParam(c, "alert")
	if err != nil {
		return err
	}
	a, err := s.alerts.Get(c.Request().Context(), currentUser(c).Scope(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.AdminAlert(page(c, fmt.Sprintf("Alert %d", id), web.SectionAlerts), a))
}

// adminAcknowledgeAlert acknowledges an open alert, which stops its
// reminders, and returns to the page the admin asked on. requireAdmin
// keeps viewers out.
func (s *Server) adminAcknowledgeAlert(c echo.Context) error {
	id, err := idParam(c, "alert")
	if err != nil {
		return err
	}
	if err := s.alerts.Acknowledge(c.Request().Context(), currentUser(c), id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, formBack(c.FormValue("back"), adminpath.Alerts, alert.FilterFromQuery, adminpath.Alert))
}
