package server

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auditlog"
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
	dups := auditlog.Filter{Action: auditevent.DuplicateBlocked, MessageID: strconv.FormatInt(id, 10)}
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

// downloadPart is how many bytes a download reads from the database at a
// time: what it holds in memory, whatever the size of the payload, while a
// client that reads slowly or not at all holds it.
const downloadPart = 1 << 20

// receivedPart reads a part of what a message or a blocked copy was
// received as (see messageview.Service.ReceivedPart).
type receivedPart func(ctx context.Context, scope auth.Scope, id, offset int64, length int) (messageview.Part, error)

// receivedDownload is the handler that downloads the bytes a message or a
// blocked copy (what, named so in the file name with dashes) was received
// as, read within the user's scope by part, with their content type, byte
// for byte: its payload when it came as JSON. They are sent as an
// attachment, so a browser saves them rather than rendering what a sender
// wrote, and a part at a time, so that a large payload is never held
// whole. Should the message go (retention) half-way, the answer ends short
// of its Content-Length, which a client reports as an incomplete download.
func receivedDownload(what string, part receivedPart) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := idParam(c, what)
		if err != nil {
			return err
		}
		ctx, scope := c.Request().Context(), currentUser(c).Scope()
		p, err := part(ctx, scope, id, 0, downloadPart)
		if err != nil {
			return err
		}
		h := c.Response().Header()
		h.Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s-%d.%s"`,
			strings.ReplaceAll(what, " ", "-"), id, fileExtension(p.ContentType)))
		h.Set(echo.HeaderContentType, p.ContentType)
		h.Set(echo.HeaderContentLength, strconv.FormatInt(p.Size, 10))
		c.Response().WriteHeader(http.StatusOK)
		for sent := int64(0); ; {
			if _, err := c.Response().Write(p.Bytes); err != nil {
				return nil // the client left
			}
			sent += int64(len(p.Bytes))
			if sent >= p.Size || len(p.Bytes) == 0 {
				return nil
			}
			if p, err = part(ctx, scope, id, sent, downloadPart); err != nil {
				return fmt.Errorf("download %s %d: %w", what, id, err)
			}
		}
	}
}

// fileExtension names a download's file by its content type.
func fileExtension(contentType string) string {
	media, _, _ := mime.ParseMediaType(contentType)
	switch {
	case media == "application/json" || strings.HasSuffix(media, "+json"):
		return "json"
	case slices.Contains(xmlMediaTypes, media):
		return "xml"
	}
	return "bin"
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
