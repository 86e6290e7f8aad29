package server

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/audit"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/web"
)

// adminMessage shows one message, the duplicates blocked against it and,
// for a message released from a blocked copy, where it came from.
// ?released=<copy id> adds the notice a release redirects with; it shows
// only when the message did come from that copy, so a crafted link cannot
// make the page claim anything.
func (s *Server) adminMessage(c echo.Context) error {
	id, err := idParam(c, "message")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	scope := currentUser(c).Scope()
	m, err := s.messages.Get(ctx, scope, id)
	if err != nil {
		return err
	}
	dups := audit.Filter{Action: auditevent.DuplicateBlocked, MessageID: strconv.FormatInt(id, 10)}
	pg, err := s.audit.List(ctx, scope, dups)
	if err != nil {
		return err
	}
	copies, err := s.blocked.OfMessage(ctx, scope, id)
	if err != nil {
		return err
	}
	justReleased := copies.Origin != nil && c.QueryParam("released") == strconv.FormatInt(copies.Origin.CopyID, 10)
	return render(c, http.StatusOK, web.AdminMessage(page(c, fmt.Sprintf("Message %d", id), web.SectionAudit),
		m, dups, pg, copies, justReleased))
}

// adminMessageReceived downloads the bytes a message was received as, with
// their content type, byte for byte. They are sent as an attachment, so a
// browser saves them rather than rendering what a sender wrote.
func (s *Server) adminMessageReceived(c echo.Context) error {
	id, err := idParam(c, "message")
	if err != nil {
		return err
	}
	m, err := s.messages.Get(c.Request().Context(), currentUser(c).Scope(), id)
	if err != nil {
		return err
	}
	if m.Received == nil {
		return apperr.New(apperr.NotFound, "not-found", "message %d arrived as JSON; its payload is on its page", id)
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="message-%d.xml"`, id))
	return c.Blob(http.StatusOK, m.Received.ContentType, m.Received.Bytes)
}

// idParam reads the id in the path; an id that cannot exist is answered
// like one that does not, naming what was looked for.
func idParam(c echo.Context, what string) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.New(apperr.NotFound, "not-found", "there is no %s %q", what, c.Param("id"))
	}
	return id, nil
}
