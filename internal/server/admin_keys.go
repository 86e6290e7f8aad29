package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/web"
)

// adminAPIKeys lists the API keys the signed-in user may see; ?revoked=ID
// confirms a revocation, shown only for a listed key that is revoked, so
// that a crafted link cannot make the page claim anything.
func (s *Server) adminAPIKeys(c echo.Context) error {
	revoked, _ := strconv.ParseInt(c.QueryParam("revoked"), 10, 64)
	return s.renderAPIKeys(c, http.StatusOK, web.APIKeys{Revoked: revoked})
}

// adminCreateAPIKey creates a key in an environment of the admin's scope
// and shows it once, in this answer: it is not stored, so neither a reload
// nor the list can show it again.
func (s *Server) adminCreateAPIKey(c echo.Context) error {
	tenant, env, _ := strings.Cut(c.FormValue("environment"), "/")
	key, err := s.changeBy(c, func(by provision.By) (string, error) {
		return s.provision.CreateAPIKey(c.Request().Context(), by, tenant, env, c.FormValue("name"))
	})
	return s.answerAPIKeys(c, err, web.APIKeys{NewKey: key, NewKeyWhere: tenant + " / " + env})
}

// adminRevokeAPIKey makes a key stop working at once, then shows the list
// (a reload does not post again).
func (s *Server) adminRevokeAPIKey(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return echo.ErrNotFound
	}
	_, err = s.changeBy(c, func(by provision.By) (string, error) {
		return "", s.provision.RevokeAPIKey(c.Request().Context(), by, id)
	})
	if err != nil {
		return s.answerAPIKeys(c, err, web.APIKeys{})
	}
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.APIKeys)+"?revoked="+strconv.FormatInt(id, 10))
}

// adminRotateAPIKey gives a key a successor, shown once, and lets the old
// key work for the grace period the admin chose.
func (s *Server) adminRotateAPIKey(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return echo.ErrNotFound
	}
	key, err := s.changeBy(c, func(by provision.By) (string, error) {
		grace, err := graceOf(c)
		if err != nil {
			return "", err
		}
		return s.provision.RotateAPIKey(c.Request().Context(), by, id, grace)
	})
	return s.answerAPIKeys(c, err, web.APIKeys{NewKey: key, RotatedFrom: id})
}

// graceOf reads a rotation form's grace period, given in whole hours.
func graceOf(c echo.Context) (time.Duration, error) {
	hours, err := strconv.Atoi(strings.TrimSpace(c.FormValue("grace_hours")))
	if err != nil {
		return 0, apperr.New(apperr.Invalid, "invalid-field", "give the grace period in whole hours, from 0 to %d",
			int(provision.MaxGrace/time.Hour))
	}
	return time.Duration(hours) * time.Hour, nil
}

// changeBy runs a change as the signed-in admin.
func (s *Server) changeBy(c echo.Context, change func(provision.By) (string, error)) (string, error) {
	by, err := provision.ByUser(currentUser(c))
	if err != nil {
		return "", err
	}
	return change(by)
}

// answerChange shows a page after a change whose outcome is err: show gets
// the status and, when the change failed in a way the admin can fix, the
// problem to tell them ("" after a success). Other errors are error pages.
func answerChange(err error, show func(status int, problem string) error) error {
	if ae, ok := apperr.As(err); ok && ae.Err == nil {
		return show(statusOfKind[ae.Kind], ae.Detail)
	}
	if err != nil {
		return err
	}
	return show(http.StatusOK, "")
}

// answerAPIKeys shows the keys page after a change: with the change's
// outcome, or with the problem the admin can fix.
func (s *Server) answerAPIKeys(c echo.Context, err error, view web.APIKeys) error {
	return answerChange(err, func(status int, problem string) error {
		if problem != "" {
			view = web.APIKeys{Problem: problem}
		}
		return s.renderAPIKeys(c, status, view)
	})
}

func (s *Server) renderAPIKeys(c echo.Context, status int, view web.APIKeys) error {
	ctx := c.Request().Context()
	scope := currentUser(c).Scope()
	var err error
	if view.List, err = s.provision.APIKeys(ctx, scope); err != nil {
		return err
	}
	if view.Places, err = s.provision.Places(ctx, scope); err != nil {
		return err
	}
	view.Now = time.Now()
	return render(c, status, web.AdminAPIKeys(page(c, "API keys", web.SectionAPIKeys), view))
}
