package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
)

// writtenCookie holds the primary's WAL position after the admin's last
// write (hexadecimal), so that the read-only pages read the primary until
// the standby has replayed it. It tells nothing secret: a forged value only
// makes its own pages read the primary, or a standby behind its own write.
const writtenCookie = "edihub_written"

// standbyLagKey is the Echo context key of how far behind the standby a
// page reads from is, when pages say so (see page).
const standbyLagKey = "standby_lag"

// WithAdminReads makes the read-only admin pages (dashboard, audit log,
// message search) read from pool, ADMIN_DATABASE_URL's, which may reach a
// standby; without it they read the primary.
func WithAdminReads(pool *pgxpool.Pool) Option {
	return func(s *Server) { s.adminReadPool = pool }
}

// readPool is the pool a read-only page reads: the standby's unless it has
// not replayed the admin's last write. It notes the standby's lag for page.
func (s *Server) readPool(c echo.Context) *pgxpool.Pool {
	var written int64
	if ck, err := c.Cookie(writtenCookie); err == nil {
		written, _ = strconv.ParseInt(ck.Value, 16, 64)
	}
	choice := s.reads.For(c.Request().Context(), written)
	if choice.Lag > 0 {
		c.Set(standbyLagKey, choice.Lag)
	}
	return choice.Pool
}

// rememberWrites sets writtenCookie on the answer of every admin request
// that may have written, just before its header goes out: by then the
// handler's transaction has committed, and the browser has the cookie
// before it follows the answer's redirect to a page.
func (s *Server) rememberWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		if s.reads.Split() {
			c.Response().Before(func() {
				written, err := s.reads.Written(c.Request().Context())
				if err != nil {
					s.log.Warn("admin pages may read a standby behind this write", "error", err)
					return
				}
				c.SetCookie(&http.Cookie{
					Name: writtenCookie, Value: strconv.FormatInt(written, 16), Path: adminpath.Prefix,
					HttpOnly: true, Secure: s.sessions.Cookie.Secure, SameSite: http.SameSiteLaxMode,
				})
			})
		}
		return next(c)
	}
}

// lagText is a standby's lag as pages say it, in whole seconds.
func lagText(lag time.Duration) string {
	return strconv.FormatInt(int64(lag.Round(time.Second)/time.Second), 10) + " s"
}
