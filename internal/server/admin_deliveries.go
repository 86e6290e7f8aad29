package server

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/web"
)

// adminDeliveries shows a page of deliveries, filtered as its URL says.
// ?replay=<id> follows a bulk replay the user started.
func (s *Server) adminDeliveries(c echo.Context) error {
	ctx := c.Request().Context()
	scope := currentUser(c).Scope()
	f := delivery.FilterFromQuery(c.QueryParams())
	pg, err := s.deliveries.List(ctx, scope, f)
	if err != nil {
		return err
	}
	destinations, err := s.provision.Destinations(ctx, scope)
	if err != nil {
		return err
	}
	v := web.Deliveries{Filter: f, Page: pg, Destinations: destinations}
	if raw := c.QueryParam("replay"); raw != "" {
		id, _ := strconv.ParseInt(raw, 10, 64)
		replay, err := s.deliveries.Replay(ctx, scope, id)
		if problem, ok := formProblem(err); ok {
			v.ReplayProblem = problem
		} else if err != nil {
			return err
		} else {
			v.Replay = &replay
		}
	}
	if c.Request().Header.Get("HX-Request") == "true" && c.Request().Header.Get("HX-Target") == "results" {
		// htmx pushes this into the address bar instead of the form's raw
		// query, which lists every empty field.
		c.Response().Header().Set("HX-Push-Url", f.URL())
	}
	return render(c, http.StatusOK, web.AdminDeliveries(page(c, "Deliveries", web.SectionDeliveries), v))
}

// adminRetryDelivery gives one failed delivery a new round of attempts and
// returns to the page the admin asked on. requireAdmin keeps viewers out.
func (s *Server) adminRetryDelivery(c echo.Context) error {
	id, err := idParam(c, "delivery")
	if err != nil {
		return err
	}
	u := currentUser(c)
	n, err := s.deliveries.Retry(c.Request().Context(), u.Actor(), u.Scope(), delivery.Match{ID: &id})
	if err != nil {
		return err
	}
	if n == 0 {
		// Said the same way for a delivery of another tenant, which the
		// admin must not learn of.
		return apperr.New(apperr.Conflict, "not-failed",
			"delivery %d is not a failed delivery you can retry: it may be queued or delivered already; reload the page", id)
	}
	return c.Redirect(http.StatusSeeOther, formBack(c.FormValue("back"), adminpath.Deliveries, delivery.FilterFromQuery, adminpath.Message))
}

// adminRetryDeliveryNow brings a pending delivery's next attempt forward to
// now and returns to the page the admin asked on.
func (s *Server) adminRetryDeliveryNow(c echo.Context) error {
	id, err := idParam(c, "delivery")
	if err != nil {
		return err
	}
	u := currentUser(c)
	if err := s.deliveries.RetryNow(c.Request().Context(), u.Actor(), u.Scope(), id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, formBack(c.FormValue("back"), adminpath.Deliveries, delivery.FilterFromQuery, adminpath.Message))
}

// adminRetryDeliveries starts a bulk replay of every failed delivery that
// matches the filter the form carries, and sends the admin to the filtered
// page, which follows the replay until it says how many it queued.
func (s *Server) adminRetryDeliveries(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	f := delivery.FilterFromQuery(form).FirstPage()
	m, ok := f.Match()
	if !ok {
		return apperr.New(apperr.Invalid, "invalid-field", "this filter selects no failed deliveries to retry")
	}
	id, err := s.deliveries.StartReplay(c.Request().Context(), currentUser(c), m)
	if err != nil {
		return err
	}
	q := f.Values()
	q.Set("replay", strconv.FormatInt(id, 10))
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.Deliveries)+"?"+q.Encode())
}
