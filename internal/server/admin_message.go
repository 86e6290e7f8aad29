package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/audit"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/messageview"
	"github.com/lefia/edihub/web"
)

// adminMessage shows one message, the duplicates blocked against it, its
// deliveries and, for a message released from a blocked copy, where it
// came from.
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
		return s.perhapsExpired(c, err)
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
	deliveries, err := s.deliveries.ForMessage(ctx, scope, id)
	if err != nil {
		return err
	}
	justReleased := copies.Origin != nil && c.QueryParam("released") == strconv.FormatInt(copies.Origin.CopyID, 10)
	return render(c, http.StatusOK, web.AdminMessage(page(c, fmt.Sprintf("Message %d", id), web.SectionMessages),
		m, dups, pg, copies, justReleased, deliveries))
}

// perhapsExpired answers for a message that is not found with a page that
// adds how long messages are kept, since a link from an audit event or a
// bookmark outlives the message it names; any other error goes on to the
// error handler. The hint shows for every missing message, whether it
// expired, never existed or is another tenant's, so it tells nothing about
// other tenants.
func (s *Server) perhapsExpired(c echo.Context, err error) error {
	ae, ok := apperr.As(err)
	if !ok || ae.Kind != apperr.NotFound || s.cfg.Retention.Messages == 0 {
		return err
	}
	hint := fmt.Sprintf("It may have expired after its retention: messages are kept at least %s (RETENTION_MESSAGES), longer in a tenant whose duplicate window is longer (see Data retention).",
		config.FormatRetention(s.cfg.Retention.Messages))
	t, ok, terr := s.retention.OfTenant(c.Request().Context(), currentUser(c).Scope())
	if terr != nil {
		return terr
	}
	if ok {
		hint = fmt.Sprintf("It may have expired after its retention: messages of %s are kept %s.", t.Tenant, t.Describe())
	}
	return render(c, http.StatusNotFound, web.AdminMessageGone(page(c, http.StatusText(http.StatusNotFound), ""), ae.Detail, hint, requestID(c)))
}

// receivedDownload is the handler that downloads the bytes a message or a
// blocked copy (what, named so in the file name with dashes) was received
// as, loaded within the user's scope by load, with their content type, byte
// for byte. They are sent as an attachment, so a browser saves them rather
// than rendering what a sender wrote.
func receivedDownload(what string, load func(ctx context.Context, scope auth.Scope, id int64) (*messageview.Received, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := idParam(c, what)
		if err != nil {
			return err
		}
		r, err := load(c.Request().Context(), currentUser(c).Scope(), id)
		if err != nil {
			return err
		}
		if r == nil {
			return apperr.New(apperr.NotFound, "not-found", "%s %d arrived as JSON; its payload is on its page", what, id)
		}
		c.Response().Header().Set(echo.HeaderContentDisposition,
			fmt.Sprintf(`attachment; filename="%s-%d.xml"`, strings.ReplaceAll(what, " ", "-"), id))
		return c.Blob(http.StatusOK, r.ContentType, r.Bytes)
	}
}

// messageReceived loads what a message was received as.
func (s *Server) messageReceived(ctx context.Context, scope auth.Scope, id int64) (*messageview.Received, error) {
	m, err := s.messages.Get(ctx, scope, id)
	return m.Received, err
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
