package server

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/web"
)

// adminUsers lists the users the signed-in user may see.
func (s *Server) adminUsers(c echo.Context) error {
	return s.renderUsers(c, http.StatusOK, web.UserForm{}, c.QueryParam("created"))
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
		return s.renderUsers(c, statusOfKind[ae.Kind], form, "")
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.Users)+"?created="+url.QueryEscape(form.Email))
}

// renderUsers shows the users page. created names a user just created; it
// is shown only when that user is in the list, so a crafted link cannot
// make the page claim anything.
func (s *Server) renderUsers(c echo.Context, status int, form web.UserForm, created string) error {
	ctx := c.Request().Context()
	scope := currentUser(c).Scope()
	users, err := s.auth.Users(ctx, scope)
	if err != nil {
		return err
	}
	tenants, err := s.auth.Tenants(ctx, scope)
	if err != nil {
		return err
	}
	view := web.Users{List: users, Tenants: tenants, Form: form}
	for _, listed := range users {
		if listed.Email == created {
			view.Created = created
		}
	}
	return render(c, status, web.AdminUsers(page(c, "Users", web.SectionUsers), view))
}
