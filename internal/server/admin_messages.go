package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/messagesearch"
	"github.com/lefia/edihub/web"
)

// adminMessages lists stored messages, filtered as its URL says.
func (s *Server) adminMessages(c echo.Context) error {
	f := messagesearch.FilterFromQuery(c.QueryParams())
	pg, err := messagesearch.New(s.readPool(c)).List(c.Request().Context(), currentUser(c).Scope(), f)
	if err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") == "true" {
		// htmx pushes this into the address bar instead of the form's raw
		// query, which lists every empty field.
		c.Response().Header().Set("HX-Push-Url", f.URL())
	}
	return render(c, http.StatusOK, web.AdminMessages(page(c, "Messages", web.SectionMessages), f, pg))
}
