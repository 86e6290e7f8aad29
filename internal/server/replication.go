package server

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
)

// replicationCheckInterval is how often the primary is asked whether it
// has a synchronous standby: a second, so that REQUIRE_SYNCHRONOUS_STANDBY
// stops acknowledging within a second of pg_auto_failover letting the
// primary go on alone.
const replicationCheckInterval = time.Second

// requireSynchronousStandby refuses intake with 503 while the primary has
// no synchronous standby, when REQUIRE_SYNCHRONOUS_STANDBY asks for it: the
// sender retries later rather than be told a message is safe that is on
// one machine.
func (s *Server) requireSynchronousStandby(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.cfg.RequireSynchronousStandby && s.replication.Alone() {
			return noSynchronousStandby(nil, "the database has no synchronous standby now, and this server acknowledges a message only on two machines (REQUIRE_SYNCHRONOUS_STANDBY); nothing was stored, retry later")
		}
		return next(c)
	}
}

// noSynchronousStandby is the answer to intake that cannot be acknowledged
// as on two machines now, whether refused before any work or found
// unconfirmed at its commit (cause, db.ErrCommitUnconfirmed): a standby
// is back within seconds of a switchover, and within the time it takes
// to bring one back otherwise.
func noSynchronousStandby(cause error, detail string) *apperr.Error {
	e := apperr.New(apperr.Unavailable, "no-synchronous-standby", "%s", detail)
	e.Err, e.RetryAfter = cause, 10*time.Second
	return e
}
