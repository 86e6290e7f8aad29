package server

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/web"
)

// adminUsers lists the users the signed-in user may see. ?created=EMAIL,
// ?disabled=ID and ?enabled=ID confirm a change, shown only when the list
// bears it out, so that a crafted link cannot make the page claim anything.
func (s *Server) adminUsers(c echo.Context) error {
	view := web.Users{Created: c.QueryParam("created")}
	for param, state := range map[string]string{"disabled": "disabled", "enabled": "active"} {
		if id, err := strconv.ParseInt(c.QueryParam(param), 10, 64); err == nil {
			view.Changed, view.ChangedTo = id, state
		}
	}
	return s.renderUsers(c, http.StatusOK, view)
}

// adminCreateUser creates a user in the admin's own scope: a tenant's admin
// only in that tenant. requireAdmin keeps viewers out before this runs.
func (s *Server) adminCreateUser(c echo.Context) error {
	u := currentUser(c)
	form := web.UserForm{Email: c.FormValue("email"), Role: c.FormValue("role"), Tenant: c.FormValue("tenant")}
	tenant, err := u.TenantForNewUser(form.Tenant)
	if err != nil {
		return err
	}
	_, err = s.provision.CreateUser(c.Request().Context(), provision.UserSpec{
		Email: form.Email, Role: form.Role, TenantSlug: tenant, Password: c.FormValue("password"), Actor: u.Actor(),
	})
	if ae, ok := apperr.As(err); ok && ae.Kind == apperr.Conflict {
		err = u.NewUserConflict(err)
	}
	if ae, ok := apperr.As(err); ok && ae.Err == nil {
		form.Problem = ae.Detail
		return s.renderUsers(c, statusOfKind[ae.Kind], web.Users{Form: form})
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.Users)+"?created="+url.QueryEscape(form.Email))
}

// adminDisableUser keeps a user from signing in and ends their sessions at
// once, then shows the list (a reload does not post again).
func (s *Server) adminDisableUser(c echo.Context) error {
	return s.changeUserState(c, "disabled", s.provision.DisableUser)
}

// adminEnableUser lets a disabled user sign in again.
func (s *Server) adminEnableUser(c echo.Context) error {
	return s.changeUserState(c, "enabled", s.provision.EnableUser)
}

// changeUserState runs change on the user the route names and redirects to
// the list, which confirms it under the query parameter param.
func (s *Server) changeUserState(c echo.Context, param string, change func(context.Context, provision.By, int64) error) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return echo.ErrNotFound
	}
	_, err = s.changeBy(c, func(by provision.By) (string, error) {
		return "", change(c.Request().Context(), by, id)
	})
	if err != nil {
		return s.answerUsers(c, err, web.Users{})
	}
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.Users)+"?"+param+"="+strconv.FormatInt(id, 10))
}

// adminResetPassword gives a user a new password, shown once in this
// answer, and ends their sessions.
func (s *Server) adminResetPassword(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return echo.ErrNotFound
	}
	pw, err := s.changeBy(c, func(by provision.By) (string, error) {
		return s.provision.ResetPassword(c.Request().Context(), by, id)
	})
	return s.answerUsers(c, err, web.Users{NewPassword: pw, ResetFor: id})
}

// answerUsers shows the users page after a change: with the change's
// outcome, or with the problem the admin can fix.
func (s *Server) answerUsers(c echo.Context, err error, view web.Users) error {
	return answerChange(err, func(status int, problem string) error {
		if problem != "" {
			view = web.Users{Problem: problem}
		}
		return s.renderUsers(c, status, view)
	})
}

// renderUsers shows the users page. A user just created is named only when
// that user is in the list.
func (s *Server) renderUsers(c echo.Context, status int, view web.Users) error {
	ctx := c.Request().Context()
	scope := currentUser(c).Scope()
	var err error
	if view.List, err = s.provision.Users(ctx, scope); err != nil {
		return err
	}
	if view.Tenants, err = s.auth.Tenants(ctx, scope); err != nil {
		return err
	}
	created := view.Created
	view.Created = ""
	for _, listed := range view.List {
		if listed.Email == created {
			view.Created = created
		}
	}
	return render(c, status, web.AdminUsers(page(c, "Users", web.SectionUsers), view))
}
