package server

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/blocked"
	"github.com/lefia/edihub/web"
)

// adminBlocked shows a blocked copy whose content changed, its diff
// against the original and, for an admin, the form that accepts it as a
// new message: the confirmation step of a release.
func (s *Server) adminBlocked(c echo.Context) error {
	id, err := idParam(c, "blocked copy")
	if err != nil {
		return err
	}
	return s.renderBlocked(c, http.StatusOK, id, web.ReleaseForm{})
}

// adminReleaseBlocked accepts a blocked copy as a new message and sends the
// admin to it. requireAdmin keeps viewers out before this runs. A missing
// reason or a copy released already is explained on the copy's page.
func (s *Server) adminReleaseBlocked(c echo.Context) error {
	id, err := idParam(c, "blocked copy")
	if err != nil {
		return err
	}
	form := web.ReleaseForm{Reason: c.FormValue("reason")}
	newID, err := s.blocked.Release(c.Request().Context(), currentUser(c), id, form.Reason)
	if ae, ok := apperr.As(err); ok && (ae.Kind == apperr.Invalid || ae.Kind == apperr.Conflict) {
		form.Problem = ae.Detail
		return s.renderBlocked(c, statusOfKind[ae.Kind], id, form)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("%s?released=%d", adminpath.Path(adminpath.Message, newID), id))
}

// adminDismissBlocked records that an admin reviewed a blocked copy and
// leaves it blocked, and sends the admin back to the copy's page, which
// shows the decision. requireAdmin keeps viewers out before this runs. A
// missing reason or a copy decided already is explained on the copy's page.
func (s *Server) adminDismissBlocked(c echo.Context) error {
	id, err := idParam(c, "blocked copy")
	if err != nil {
		return err
	}
	form := web.ReleaseForm{DismissReason: c.FormValue("reason")}
	err = s.blocked.Dismiss(c.Request().Context(), currentUser(c), id, form.DismissReason)
	if ae, ok := apperr.As(err); ok && (ae.Kind == apperr.Invalid || ae.Kind == apperr.Conflict) {
		form.DismissProblem = ae.Detail
		return s.renderBlocked(c, statusOfKind[ae.Kind], id, form)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.Blocked, id)+"?dismissed=1")
}

// adminReview lists the kept copies with changed content by review state,
// the open ones unless the URL asks for others.
func (s *Server) adminReview(c echo.Context) error {
	f := blocked.FilterFromQuery(c.QueryParams())
	pg, err := s.blocked.Review(c.Request().Context(), currentUser(c).Scope(), f)
	if err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") == "true" {
		c.Response().Header().Set("HX-Push-Url", f.URL())
	}
	return render(c, http.StatusOK, web.AdminReview(page(c, "Review of changed copies", web.SectionReview), f, pg))
}

func (s *Server) renderBlocked(c echo.Context, status int, id int64, form web.ReleaseForm) error {
	bc, err := s.blocked.Get(c.Request().Context(), currentUser(c).Scope(), id)
	if err != nil {
		return err
	}
	form.JustDismissed = c.QueryParam("dismissed") == "1" && bc.Dismissed != nil
	return render(c, status, web.AdminBlocked(page(c, fmt.Sprintf("Blocked copy %d", id), web.SectionReview), bc, form))
}
