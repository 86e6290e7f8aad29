package server

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/audit"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/web"
)

// adminMessage shows one message and the duplicates blocked against it.
func (s *Server) adminMessage(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return apperr.New(apperr.NotFound, "not-found", "there is no message %q", c.Param("id"))
	}
	ctx := c.Request().Context()
	scope := currentUser(c).Scope()
	m, err := s.inspect.Get(ctx, scope, id)
	if err != nil {
		return err
	}
	dups := audit.Filter{Action: ingest.ActionDuplicateBlocked, MessageID: strconv.FormatInt(id, 10)}
	pg, err := s.audit.List(ctx, scope, dups)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.AdminMessage(page(c, fmt.Sprintf("Message %d", id), web.SectionAudit), m, dups, pg))
}
