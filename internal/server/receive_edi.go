package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/edi"
	"github.com/lefia/edihub/internal/envelope"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/sender"
)

// receiveInterchange handles an X12 or EDIFACT interchange sent to
// receive-message. Each transaction set or EDIFACT message is one message,
// read through its JSON view and decided as a packet's IDocs are: all in
// one transaction, in order, and any that cannot be accepted refuses the
// whole interchange. text is true for a text/plain body, which is an
// interchange only when it starts as one.
func (s *Server) receiveInterchange(c echo.Context, who sender.Typed, key string, text bool) error {
	body, err := s.readBody(c, ediBodyCost)
	if err != nil {
		return err
	}
	if text && !edi.LooksLikeInterchange(body) {
		return apperr.New(apperr.UnsupportedMediaType, "unsupported-media-type",
			"a text/plain body is read as an X12 or EDIFACT interchange, and this one starts with neither ISA, UNA nor UNB; "+unsupportedDetail)
	}
	if key != "" {
		// The interchange's control number is its sender's statement of
		// identity; a second one could only disagree with it.
		refused := apperr.New(apperr.Invalid, "invalid-idempotency-key",
			"an interchange is identified by its control number, per sender and receiver; send it without Idempotency-Key")
		refused.IdempotencyKey = key
		return refused
	}
	limits := edi.Limits{MaxMessages: s.cfg.MaxBatchMessages}
	ic, err := edi.Parse(body, limits)
	if err != nil {
		return interchangeProblem(err)
	}
	// Its views are read until the messages are decided, which the answer
	// follows; nothing is left holding them after that.
	defer ic.Release()
	contentType := c.Request().Header.Get(echo.HeaderContentType)
	items := make([]ingest.Request, len(ic.Messages))
	// Every message of the request comes from where the request came from.
	from := apiSource(c, who.Caller, ingest.EndpointReceiveMessage)
	for i, m := range ic.Messages {
		reportOf(c).messageType = m.Code
		mt, err := who.MessageType(c.Request().Context(), m.Code)
		switch {
		case sender.IsUnknownType(err):
			return apperr.New(apperr.Unprocessable, "unknown-message-type",
				"%s: message type %q is not configured for this tenant", messageName(ic, m), m.Code)
		case err != nil:
			return err
		}
		reportOf(c).typeKnown = true
		if err := envelope.CheckDocnumOf(func() string { return messageName(ic, m) + "'s control number" }, m.Docnum); err != nil {
			return err
		}
		source := from
		received := &ingest.Received{ContentType: contentType, Bytes: m.Bytes, Frame: m.Frame}
		if len(ic.Messages) > 1 {
			source.Position = m.Position
			received.Position, received.Of = m.Position, len(ic.Messages)
		}
		items[i] = ingest.Request{
			TenantID: who.TenantID, EnvironmentID: who.EnvironmentID, MessageType: mt,
			Docnum: m.Docnum, Payload: m.View, CanonicalPayload: m.Canonical, ShapeIsContent: true,
			Source: source, Received: received,
		}
	}
	reportOf(c).carrying(items)
	res, err := s.ingest.ReceiveBatch(c.Request().Context(), ingest.Batch{Items: items, Interchange: &ingest.Interchange{
		Standard: ic.Standard, Sender: ic.Sender, Receiver: ic.Receiver, ControlNumber: ic.ControlNumber,
		ContentHash: ic.ContentHash, Window: s.cfg.InterchangeWindow,
		Acknowledge: func(n int64) []byte { return edi.Acknowledge(ic, n, time.Now().UTC()) },
		Reject:      func(n int64) []byte { return edi.RejectReused(ic, n, time.Now().UTC()) },
	}})
	var refused *ingest.BatchError
	if errors.As(err, &refused) {
		first := refused.Items[0]
		return &apperr.Error{Kind: first.Err.Kind, Type: first.Err.Type, IdempotencyKey: first.Err.IdempotencyKey,
			Detail: messageName(ic, ic.Messages[first.Index]) + ": " + first.Err.Detail}
	}
	if err != nil {
		return s.senders.Refused(who.Caller, err)
	}
	report := reportOf(c)
	report.messages = append(report.messages, res.Results...)
	status, duplicateOf := "accepted", (*int64)(nil)
	if res.Interchange.Duplicate {
		status, duplicateOf = "duplicate", &res.Interchange.ID
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	if media := ackMediaType(ic); acceptsOnly(c.Request(), media) {
		return c.Blob(http.StatusOK, media, res.Interchange.Acknowledgment)
	}
	return c.JSONBlob(http.StatusOK, interchangeAnswer(ic, status, duplicateOf, res.Interchange.Acknowledgment, res.Body))
}

// ackMediaType is the media type of the acknowledgment of ic.
func ackMediaType(ic *edi.Interchange) string {
	if ic.Standard == edi.X12 {
		return "application/edi-x12"
	}
	return "application/edifact"
}

// acceptsOnly tells whether the request's Accept header names media and
// not JSON: the sender then wants the acknowledgment as the whole body.
func acceptsOnly(r *http.Request, media string) bool {
	named := false
	for _, value := range r.Header.Values(echo.HeaderAccept) {
		for part := range strings.SplitSeq(value, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			switch {
			case err != nil:
			case mt == media:
				named = true
			case mt == "application/json":
				return false
			}
		}
	}
	return named
}

// interchangeAnswer is the answer to an interchange: its envelope, status
// and acknowledgment beside the answer of its messages, {"messages": [...]}, which
// for a duplicate is the first answer's.
func interchangeAnswer(ic *edi.Interchange, status string, duplicateOf *int64, ack, messages []byte) []byte {
	b := append([]byte(`{"interchange":`), edi.AnswerJSON(ic, status, duplicateOf)...)
	b = append(b, `,"acknowledgment":`...)
	quoted, _ := json.Marshal(string(ack)) // a string always encodes
	b = append(b, quoted...)
	b = append(b, ',')
	return append(b, messages[1:]...)
}

// messageName names a message of an interchange in a problem's detail.
func messageName(ic *edi.Interchange, m edi.Message) string {
	what := "transaction set"
	if ic.Standard == edi.EDIFACT {
		what = "message"
	}
	return fmt.Sprintf("%s %d of %d (%s %s)", what, m.Position, len(ic.Messages), m.Code, m.Docnum)
}

// interchangeProblem turns the parser's refusals into problems.
func interchangeProblem(err error) error {
	var malformed *edi.MalformedError
	var tooMany *edi.TooManyMessagesError
	switch {
	case errors.As(err, &malformed):
		return &apperr.Error{Kind: apperr.Invalid, Type: "malformed-interchange",
			Detail: "the interchange is malformed at " + malformed.Error()}
	case errors.As(err, &tooMany):
		return apperr.New(apperr.TooLarge, "payload-too-large",
			"the interchange holds more than %d messages, the most one request may carry (MAX_BATCH_MESSAGES); "+
				"send smaller interchanges", tooMany.Max)
	case errors.Is(err, edi.ErrNotInterchange):
		return &apperr.Error{Kind: apperr.Invalid, Type: "malformed-interchange", Detail: err.Error()}
	}
	return err
}
