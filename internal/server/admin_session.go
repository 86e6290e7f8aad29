package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/blocked"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/web"
)

const (
	// sessionUserKey is the session value naming the signed-in user, and
	// sessionEpochKey the user's session epoch at sign-in (see
	// auth.User.SessionEpoch).
	sessionUserKey  = "user_id"
	sessionEpochKey = "session_epoch"
	// userKey is the Echo context key of the signed-in auth.User.
	userKey = "admin_user"
	// csrfKey is the Echo context key of the request's CSRF token, and
	// csrfSessionKey the session value that holds it.
	csrfKey        = "csrf"
	csrfSessionKey = "csrf_token"
	// signInCSRFCookie holds the CSRF token of a visitor who is not signed
	// in (see visitorToken).
	signInCSRFCookie = "edihub_signin_csrf"
)

// newSessions returns the admin session manager. Sessions live in
// PostgreSQL (the sessions table of migration 001), so every replica sees
// them and a restart signs nobody out.
//
// The cookie is HttpOnly, so scripts cannot read it, and SameSite=Lax:
// browsers leave it off cross-site POSTs (the forms that change things),
// yet send it when an admin follows a shared /admin/audit?… link from a
// mail or a chat, which Strict would turn into a sign-in page.
func newSessions(pool *pgxpool.Pool, secure bool) *scs.SessionManager {
	m := scs.New()
	// No cleanup goroutine per manager: Serve removes expired sessions.
	m.Store = pgxstore.NewWithCleanupInterval(pool, 0)
	m.Lifetime = 12 * time.Hour
	m.IdleTimeout = 2 * time.Hour
	// The table holds token hashes, so a copy of it opens no session.
	m.HashTokenInStore = true
	m.Cookie.Name = "edihub_session"
	m.Cookie.Path = adminpath.Prefix
	m.Cookie.HttpOnly = true
	m.Cookie.SameSite = http.SameSiteLaxMode
	m.Cookie.Secure = secure
	// The cookie ends with the browser session; the server-side lifetime
	// above bounds it in any case.
	m.Cookie.Persist = false
	return m
}

// sessionSweepInterval is how often expired sessions are deleted.
const sessionSweepInterval = 10 * time.Minute

// expireSessions deletes expired sessions until ctx ends. The session
// library ignores an expired row already, so a missed round only keeps
// dead rows a little longer.
func (s *Server) expireSessions(ctx context.Context) {
	ticker := time.NewTicker(sessionSweepInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if _, err := db.On(s.pool).SessionDeleteExpired(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("delete expired sessions", "error", err)
		}
	}
}

// adminPages is the middleware of every /admin route: a small body limit
// (forms only), form fields that text columns can hold, no caching of pages that show customer data, the session,
// the CSRF check on every unsafe method, and the position of every write
// for the pages that may read a standby.
func (s *Server) adminPages() []echo.MiddlewareFunc {
	return []echo.MiddlewareFunc{
		middleware.BodyLimit("64K"),
		plainForm,
		func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
				return next(c)
			}
		},
		s.loadSession,
		s.protectForms(),
		s.rememberWrites,
	}
}

var errCSRF = apperr.New(apperr.Forbidden, "csrf-token-invalid",
	"this form has expired or did not come from edihub: reload the page and try again")

// protectForms guards every unsafe request of the admin pages against
// cross-site request forgery, twice. Current browsers say where a request
// comes from (Sec-Fetch-Site, Origin), and Go's CrossOriginProtection
// refuses one from another site. And every form carries a random token
// that the request must match (formToken): a signed-in session's is kept
// server-side in the session and written into each form (and into htmx's
// headers), so a token is good for one session only, and a token and cookie
// that an attacker obtained in a session of their own and planted in a
// victim's browser open nothing, as they would with a token checked against
// a cookie.
func (s *Server) protectForms() echo.MiddlewareFunc {
	crossOrigin := http.NewCrossOriginProtection()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			token := s.formToken(c)
			switch r := c.Request(); r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				if token == "" {
					var err error
					if token, err = s.newFormToken(c); err != nil {
						return err
					}
				}
			default:
				sent := r.Header.Get(echo.HeaderXCSRFToken)
				if sent == "" {
					sent = c.FormValue("_csrf")
				}
				if crossOrigin.Check(r) != nil || token == "" ||
					subtle.ConstantTimeCompare([]byte(sent), []byte(token)) != 1 {
					return errCSRF
				}
			}
			c.Set(csrfKey, token)
			return next(c)
		}
	}
}

// formToken is the CSRF token the request must carry: its session's, or
// for a visitor who is not signed in, the one of the sign-in cookie; "" when
// it has none yet.
func (s *Server) formToken(c echo.Context) string {
	ctx := c.Request().Context()
	token := s.sessions.GetString(ctx, csrfSessionKey)
	if token != "" || s.sessions.GetInt64(ctx, sessionUserKey) != 0 {
		return token
	}
	return visitorToken(c)
}

// newFormToken gives the request a CSRF token. A signed-in session from
// before tokens were kept gets one in its row. A visitor gets one in the
// sign-in cookie instead of a stored session: a session row for every
// visit of the sign-in page, kept for hours, would let anyone fill the
// sessions table. The visitor's token guards the
// sign-in form only, the one form a visitor can post, and is replaced by a
// session's at sign-in. Signing it would prove nothing more: it belongs to
// no session, so any token the server would sign an attacker could fetch
// as well, and the Sec-Fetch-Site and Origin check still applies.
func (s *Server) newFormToken(c echo.Context) (string, error) {
	ctx := c.Request().Context()
	if s.sessions.GetInt64(ctx, sessionUserKey) != 0 {
		token := newCSRFToken(ctx, s.sessions)
		return token, s.saveSession(c)
	}
	token := rand.Text()
	c.SetCookie(s.signInCookie(token))
	return token, nil
}

// visitorToken is the token of the request's sign-in cookie, or "" when it
// has none that the server could have made: the value is written into the
// page, so nothing else is taken from a cookie.
func visitorToken(c echo.Context) string {
	ck, err := c.Cookie(signInCSRFCookie)
	if err != nil || len(ck.Value) != tokenLength || strings.Trim(ck.Value, base32Alphabet) != "" {
		return ""
	}
	return ck.Value
}

// base32Alphabet is the alphabet of rand.Text, and tokenLength the length
// of its texts, which a later Go may make longer.
const base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

var tokenLength = len(rand.Text())

// signInCookie is the cookie holding a visitor's token, with the session
// cookie's attributes; an empty token deletes it. It ends with the browser
// session, as the session cookie does.
func (s *Server) signInCookie(token string) *http.Cookie {
	ck := &http.Cookie{
		Name: signInCSRFCookie, Value: token, Path: adminpath.Prefix,
		HttpOnly: true, Secure: s.sessions.Cookie.Secure, SameSite: http.SameSiteLaxMode,
	}
	if token == "" {
		ck.MaxAge = -1
	}
	return ck
}

// newCSRFToken gives the session a new random CSRF token and returns it.
func newCSRFToken(ctx context.Context, sessions *scs.SessionManager) string {
	token := rand.Text()
	sessions.Put(ctx, csrfSessionKey, token)
	return token
}

// loadSession reads the request's session from the store. With an idle
// timeout every request moves the session's expiry on; that is saved here,
// before the handler writes anything, so that a failure to save is an error
// page rather than half an answer.
func (s *Server) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Add(echo.HeaderVary, echo.HeaderCookie)
		var token string
		if ck, err := c.Cookie(s.sessions.Cookie.Name); err == nil {
			token = ck.Value
		}
		ctx, err := s.sessions.Load(c.Request().Context(), token)
		if err != nil {
			return fmt.Errorf("load session: %w", err)
		}
		c.SetRequest(c.Request().WithContext(ctx))
		if s.sessions.Status(ctx) == scs.Modified {
			if err := s.saveSession(c); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// saveSession stores the session and sets its cookie. Handlers that change
// the session call it before they answer.
func (s *Server) saveSession(c echo.Context) error {
	ctx := c.Request().Context()
	token, expiry, err := s.sessions.Commit(ctx)
	if err != nil {
		return fmt.Errorf("save session: %w", err)
	}
	s.sessions.WriteSessionCookie(ctx, c.Response(), token, expiry)
	return nil
}

// requireUser lets signed-in users through and sends everyone else to the
// sign-in page. The user is read from the database on every request, so a
// deleted or disabled user, a changed role or a new password takes effect
// at once.
func (s *Server) requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		id := s.sessions.GetInt64(ctx, sessionUserKey)
		if id == 0 {
			return signInFirst(c)
		}
		// A session from before epochs were kept has none: 0, every user's
		// first epoch.
		u, err := s.auth.SessionUser(ctx, id, int32(s.sessions.GetInt(ctx, sessionEpochKey)))
		if errors.Is(err, auth.ErrNoUser) {
			if err := s.sessions.Destroy(ctx); err != nil {
				return fmt.Errorf("end a session that is over: %w", err)
			}
			s.sessions.WriteSessionCookie(ctx, c.Response(), "", time.Time{})
			return signInFirst(c)
		}
		if err != nil {
			return err
		}
		c.Set(userKey, u)
		c.Set(openReviewsKey, func() string { return s.openReviews(c.Request().Context(), u) })
		return next(c)
	}
}

var errSignInFirst = apperr.New(apperr.Unauthorized, "sign-in-required",
	"sign in first; your session may have expired")

// signInFirst sends a page request to the sign-in page, which comes back
// to the page afterwards; a form post cannot be replayed, so it fails.
func signInFirst(c echo.Context) error {
	r := c.Request()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return errSignInFirst
	}
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.Login)+"?next="+url.QueryEscape(r.URL.RequestURI()))
}

// requireAdmin refuses viewers; it guards every route that changes things.
func requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !currentUser(c).IsAdmin() {
			return auth.ErrAdminOnly
		}
		return next(c)
	}
}

// currentUser is the signed-in user of a route behind requireUser.
func currentUser(c echo.Context) auth.User {
	u, _ := c.Get(userKey).(auth.User)
	return u
}

func csrfToken(c echo.Context) string {
	token, _ := c.Get(csrfKey).(string)
	return token
}

// openReviewsKey is the Echo context key of the function that counts the
// blocked copies awaiting review for the navigation. requireUser sets it,
// and page calls it, so that only a request that renders a page pays for
// the count.
const openReviewsKey = "open_reviews"

// openReviews is the navigation's count of copies u may review, as text;
// "" when there are none, or when they cannot be counted (the page is
// still worth showing, and the failure is logged).
func (s *Server) openReviews(ctx context.Context, u auth.User) string {
	n, err := s.blocked.OpenCount(ctx, u.Scope())
	if err != nil {
		s.log.Warn("count blocked copies awaiting review", "error", err)
		return ""
	}
	return blocked.OpenCountText(n)
}

// page is the frame of an admin page for the signed-in user.
func page(c echo.Context, title, section string) web.Page {
	p := web.Page{Title: title, User: currentUser(c), CSRF: csrfToken(c), Section: section}
	if lag, ok := c.Get(standbyLagKey).(time.Duration); ok {
		p.StandbyLag = lagText(lag)
	}
	if count, ok := c.Get(openReviewsKey).(func() string); ok {
		p.OpenReviews = count()
	}
	return p
}
