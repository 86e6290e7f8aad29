package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/web"
)

// adminHome is where a signed-in user lands: the dashboard, which shows
// traffic, duplicates, deliveries and open alerts at a glance.
var adminHome = adminpath.Path(adminpath.Dashboard)

// adminLoginForm shows the sign-in form, or moves a signed-in user on.
func (s *Server) adminLoginForm(c echo.Context) error {
	next := safeNext(c.QueryParam("next"))
	if s.sessions.GetInt64(c.Request().Context(), sessionUserKey) != 0 {
		return c.Redirect(http.StatusSeeOther, next)
	}
	return render(c, http.StatusOK, web.AdminLogin(web.LoginForm{CSRF: csrfToken(c), Next: next}))
}

// adminLogin checks the credentials, then starts a session under a new
// token, so that a token planted before sign-in (session fixation) is
// worthless afterwards.
func (s *Server) adminLogin(c echo.Context) error {
	form := web.LoginForm{CSRF: csrfToken(c), Next: safeNext(c.FormValue("next")), Email: c.FormValue("email")}
	ctx := c.Request().Context()
	u, err := s.auth.Login(ctx, form.Email, c.FormValue("password"), c.RealIP())
	if ae, ok := apperr.As(err); ok && ae.Err == nil {
		form.Problem = ae.Detail
		return render(c, statusOfKind[ae.Kind], web.AdminLogin(form))
	}
	if err != nil {
		return err
	}
	if err := s.sessions.RenewToken(ctx); err != nil {
		return fmt.Errorf("renew session token: %w", err)
	}
	// The CSRF token is renewed with the session: one known before sign-in
	// is worthless after it.
	newCSRFToken(ctx, s.sessions)
	s.sessions.Put(ctx, sessionUserKey, u.ID)
	s.sessions.Put(ctx, sessionEpochKey, int(u.SessionEpoch))
	if err := s.saveSession(c); err != nil {
		return err
	}
	// The visitor's token is done with.
	c.SetCookie(s.signInCookie(""))
	return c.Redirect(http.StatusSeeOther, form.Next)
}

// adminLogout records the sign-out and destroys the session in the store,
// so that a copy of the cookie opens nothing afterwards.
func (s *Server) adminLogout(c echo.Context) error {
	ctx := c.Request().Context()
	if err := s.auth.Logout(ctx, currentUser(c), c.RealIP()); err != nil {
		return err
	}
	if err := s.sessions.Destroy(ctx); err != nil {
		return fmt.Errorf("destroy session: %w", err)
	}
	s.sessions.WriteSessionCookie(ctx, c.Response(), "", time.Time{})
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.Login))
}

// safeNext returns where to go after signing in: next when it is a path of
// the admin pages on this server, else the audit log, so that a crafted
// sign-in link cannot send anyone to another site.
func safeNext(next string) string {
	u, err := url.Parse(next)
	switch {
	case err != nil, u.Scheme != "", u.Host != "", u.Opaque != "", u.User != nil,
		strings.HasPrefix(next, "//"), strings.ContainsAny(next, `\`),
		u.Path != adminpath.Prefix && !strings.HasPrefix(u.Path, adminpath.Prefix+"/"):
		return adminHome
	}
	return next
}
