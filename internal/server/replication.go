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
			e := apperr.New(apperr.Unavailable, "no-synchronous-standby",
				"the database has no synchronous standby now, and this server acknowledges a message only on two machines (REQUIRE_SYNCHRONOUS_STANDBY); nothing was stored, retry later")
			e.RetryAfter = 10 * time.Second
			return e
		}
		return next(c)
	}
}
