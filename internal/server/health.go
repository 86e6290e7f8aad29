package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/replication"
	"github.com/lefia/edihub/internal/schema"
)

// healthz answers while the process is up, whatever the database does, so
// that an orchestrator does not restart a server that is waiting for it.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 only when the database is reachable and fully
// migrated, so that a load balancer sends no traffic before that. Its body
// also says whether an acknowledgment means two machines now
// ("replication"); with REQUIRE_SYNCHRONOUS_STANDBY a primary without a
// synchronous standby is not ready, since intake refuses to acknowledge.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.pool.Ping(ctx); err != nil {
		s.log.Warn("readiness: database unreachable", "error", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "database unreachable"})
	}
	upToDate, err := schema.UpToDate(ctx, s.pool)
	if err != nil || !upToDate {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "migrations pending"})
	}
	repl, err := replication.Read(ctx, db.On(s.pool))
	if err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "database unreachable"})
	}
	if s.cfg.RequireSynchronousStandby && repl.Alone() {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "no synchronous standby", "replication": repl.Describe()})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready", "replication": repl.Describe()})
}
