package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/partner"
	"github.com/lefia/edihub/web"
)

// adminPartners shows a page of the senders and receivers of interchanges,
// filtered as its URL says.
func (s *Server) adminPartners(c echo.Context) error {
	f := partner.FilterFromQuery(c.QueryParams())
	pg, err := s.partners.List(c.Request().Context(), currentUser(c).Scope(), f)
	if err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") == "true" && c.Request().Header.Get("HX-Target") == "results" {
		c.Response().Header().Set("HX-Push-Url", f.URL())
	}
	return render(c, http.StatusOK, web.AdminPartners(page(c, "Partners", web.SectionPartners), web.Partners{Filter: f, Page: pg}))
}
