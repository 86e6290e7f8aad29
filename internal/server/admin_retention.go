package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/web"
)

// adminRetention shows how long data is kept, per tenant within the user's
// scope, and what the last sweeps removed. The dashboard links to it, and
// it counts as the dashboard's in the navigation, whose sections fill the
// line.
func (s *Server) adminRetention(c echo.Context) error {
	o, err := s.retention.Overview(c.Request().Context(), currentUser(c).Scope())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.AdminRetention(page(c, "Data retention", web.SectionRetention), o))
}
