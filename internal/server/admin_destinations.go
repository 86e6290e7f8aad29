package server

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/web"
)

// adminDestinations lists the destinations the user may see, each with its
// queue: deliveries waiting, the oldest one's wait, deliveries per second.
// ?saved=<id>
// adds the notice a save or a pause redirects with; it shows only for a
// destination on the list. ?deleted=<id>&cancelled=<n> is the notice a
// deletion redirects with.
func (s *Server) adminDestinations(c echo.Context) error {
	list, err := s.provision.Destinations(c.Request().Context(), currentUser(c).Scope())
	if err != nil {
		return err
	}
	ids := make([]int64, len(list))
	for i, d := range list {
		ids[i] = d.ID
	}
	backlogs, err := s.deliveries.Backlogs(c.Request().Context(), ids)
	if err != nil {
		return err
	}
	v := web.Destinations{List: list, Backlogs: backlogs}
	if deleted, err := strconv.ParseInt(c.QueryParam("deleted"), 10, 64); err == nil {
		cancelled, _ := strconv.ParseInt(c.QueryParam("cancelled"), 10, 64)
		v.Deleted = &web.DeletedDestination{ID: deleted, Cancelled: cancelled}
	}
	for _, d := range list {
		if c.QueryParam("saved") == strconv.FormatInt(d.ID, 10) {
			v.Saved = d.ID
		}
	}
	return render(c, http.StatusOK, web.AdminDestinations(page(c, "Destinations", web.SectionDestinations), v))
}

// adminNewDestination shows the form that creates a destination.
func (s *Server) adminNewDestination(c echo.Context) error {
	f := web.DestinationForm{MaxConcurrency: strconv.Itoa(provision.DefaultMaxConcurrency)}
	return s.renderNewDestination(c, http.StatusOK, f)
}

// adminCreateDestination creates a destination in one of the environments
// of the admin's scope and shows its signing secret, once. A URL the egress
// policy refuses, an unknown message type or a bad secret is explained on
// the form.
func (s *Server) adminCreateDestination(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	f := destinationForm(c)
	id, secret, err := s.createDestination(c, f)
	if problem, ok := formProblem(err); ok {
		f.Problem = problem
		return s.renderNewDestination(c, statusOfError(err), f)
	}
	if err != nil {
		return err
	}
	d, err := s.provision.Destination(ctx, u.Scope(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusCreated, web.AdminDestinationCreated(page(c, "Destination created", web.SectionDestinations), d, secret))
}

// createDestination creates the destination of the form f, in one of the
// environments the user may see: the form's list is the whole check, so a
// forged place of another tenant is refused like a mistyped one.
func (s *Server) createDestination(c echo.Context, f web.DestinationForm) (id int64, secret string, err error) {
	ctx := c.Request().Context()
	u := currentUser(c)
	places, err := s.provision.Places(ctx, u.Scope())
	if err != nil {
		return 0, "", err
	}
	i := slices.IndexFunc(places, func(p provision.Place) bool { return web.PlaceValue(p) == f.Place })
	if i < 0 {
		return 0, "", apperr.New(apperr.Invalid, "invalid-field", "choose one of the environments listed, not %q", f.Place)
	}
	concurrency, err := concurrencyField(f.MaxConcurrency)
	if err != nil {
		return 0, "", err
	}
	return s.provision.CreateDestination(ctx, provision.DestinationSpec{
		TenantSlug: places[i].Tenant, EnvironmentSlug: places[i].Environment, URL: f.URL,
		MessageTypeCodes: typeCodes(f.MessageTypes), Secret: strings.TrimSpace(c.FormValue("secret")),
		MaxConcurrency: concurrency, Actor: u.Actor(),
	}, s.cfg.Delivery.Egress)
}

func (s *Server) renderNewDestination(c echo.Context, status int, f web.DestinationForm) error {
	places, err := s.provision.Places(c.Request().Context(), currentUser(c).Scope())
	if err != nil {
		return err
	}
	f.Places = places
	return render(c, status, web.AdminDestinationForm(page(c, "New destination", web.SectionDestinations), f))
}

// adminDestination shows the form that edits a destination.
func (s *Server) adminDestination(c echo.Context) error {
	id, err := idParam(c, "destination")
	if err != nil {
		return err
	}
	d, err := s.provision.Destination(c.Request().Context(), currentUser(c).Scope(), id)
	if err != nil {
		return err
	}
	f := web.DestinationForm{
		URL: d.URL, MessageTypes: strings.Join(d.MessageTypes, ", "), MaxConcurrency: strconv.Itoa(int(d.MaxConcurrency)),
	}
	return renderDestination(c, http.StatusOK, d, f)
}

// adminSaveDestination saves an edited destination and returns to the
// list; a problem is explained on the form.
func (s *Server) adminSaveDestination(c echo.Context) error {
	id, err := idParam(c, "destination")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u := currentUser(c)
	d, err := s.provision.Destination(ctx, u.Scope(), id)
	if err != nil {
		return err
	}
	f := destinationForm(c)
	concurrency, err := concurrencyField(f.MaxConcurrency)
	if err == nil {
		err = s.provision.UpdateDestination(ctx, u.Scope(), id, provision.DestinationChange{
			URL: f.URL, MessageTypeCodes: typeCodes(f.MessageTypes), MaxConcurrency: concurrency, Actor: u.Actor(),
		}, s.cfg.Delivery.Egress)
	}
	if problem, ok := formProblem(err); ok {
		f.Problem = problem
		return renderDestination(c, statusOfError(err), d, f)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("%s?saved=%d", adminpath.Path(adminpath.Destinations), id))
}

func renderDestination(c echo.Context, status int, d provision.Destination, f web.DestinationForm) error {
	f.ID, f.Tenant, f.Environment, f.Paused = d.ID, d.Tenant, d.Environment, d.Paused
	return render(c, status, web.AdminDestinationForm(page(c, fmt.Sprintf("Destination %d", d.ID), web.SectionDestinations), f))
}

// adminPauseDestination and adminResumeDestination stop and restart a
// destination's deliveries and return to the list.
func (s *Server) adminPauseDestination(c echo.Context) error  { return s.setPaused(c, true) }
func (s *Server) adminResumeDestination(c echo.Context) error { return s.setPaused(c, false) }

func (s *Server) setPaused(c echo.Context, paused bool) error {
	id, err := idParam(c, "destination")
	if err != nil {
		return err
	}
	u := currentUser(c)
	if err := s.deliveries.SetPaused(c.Request().Context(), u.Actor(), u.Scope(), id, paused); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("%s?saved=%d", adminpath.Path(adminpath.Destinations), id))
}

// adminConfirmDeleteDestination asks an admin to confirm that a destination
// goes, saying how many deliveries that cancels.
func (s *Server) adminConfirmDeleteDestination(c echo.Context) error {
	id, err := idParam(c, "destination")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	d, err := s.provision.Destination(ctx, currentUser(c).Scope(), id)
	if err != nil {
		return err
	}
	backlogs, err := s.deliveries.Backlogs(ctx, []int64{id})
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.AdminDestinationDelete(page(c, fmt.Sprintf("Delete destination %d", id), web.SectionDestinations), d, backlogs[id]))
}

// adminDeleteDestination deletes a destination, cancelling what it still
// owed, and returns to the list, which says so.
func (s *Server) adminDeleteDestination(c echo.Context) error {
	id, err := idParam(c, "destination")
	if err != nil {
		return err
	}
	u := currentUser(c)
	cancelled, err := s.deliveries.DeleteDestination(c.Request().Context(), u.Actor(), u.Scope(), id)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("%s?deleted=%d&cancelled=%d", adminpath.Path(adminpath.Destinations), id, cancelled))
}

// destinationForm reads the fields the create and edit forms share.
func destinationForm(c echo.Context) web.DestinationForm {
	return web.DestinationForm{
		Place: c.FormValue("place"), URL: strings.TrimSpace(c.FormValue("url")),
		MessageTypes: c.FormValue("message_types"), MaxConcurrency: strings.TrimSpace(c.FormValue("max_concurrency")),
	}
}

// typeCodes splits the message types field at commas and spaces.
func typeCodes(field string) []string {
	return strings.FieldsFunc(field, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
}

func concurrencyField(field string) (int32, error) {
	n, err := strconv.ParseInt(field, 10, 32)
	if err != nil {
		return 0, apperr.New(apperr.Invalid, "invalid-field", "deliveries at once must be a number from 1 to 100, not %q", field)
	}
	return int32(n), nil
}

// formProblem is the text to show on a form for err: the detail of an
// error the user can act on, which wraps no cause of edihub's own.
func formProblem(err error) (string, bool) {
	ae, ok := apperr.As(err)
	if !ok || ae.Err != nil {
		return "", false
	}
	return ae.Detail, true
}

func statusOfError(err error) int {
	ae, _ := apperr.As(err)
	return statusOfKind[ae.Kind]
}
