package server

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/metrics"
	"github.com/lefia/edihub/internal/refused"
)

// ingestReport collects, while an ingest request is handled, what its log
// line and metrics need: whose request it was and what became of it.
type ingestReport struct {
	endpoint      string
	tenantID      int64
	environmentID int64
	messageType   string
	// typeKnown says that messageType is one of the tenant's configured
	// codes; only those become metrics labels.
	typeKnown bool
	messageID int64
	// messages are the outcomes of every message the request carried: one
	// for a single message, one per IDoc of a packet or item of a batch.
	messages []ingest.Result
	// outcome and reason are the request's labels, set once the handler
	// returned: before the request logger, which runs outside, reads them.
	outcome, reason string
	// sender is the authenticated API key or the known integration the
	// request came from, whose refusals are counted; Kind is "" before
	// either is known.
	sender refused.Subject
}

const ingestReportKey = "edihub.ingest_report"

// reportOf returns the request's ingest report, for handlers to fill in.
func reportOf(c echo.Context) *ingestReport {
	if r, ok := c.Get(ingestReportKey).(*ingestReport); ok {
		return r
	}
	// Outside the ingest routes nothing reads the report; a throwaway one
	// keeps the handlers free of nil checks.
	return &ingestReport{}
}

// observeIngest wraps an ingest endpoint: after the handler it counts the
// outcome and leaves in the report what the request's log line adds (see
// requestLogger): tenant, message and outcome, never the payload or
// credentials.
func (s *Server) observeIngest(endpoint string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := &ingestReport{endpoint: endpoint}
			c.Set(ingestReportKey, r)
			err := interrupted(c, next(c))

			r.outcome, r.reason = r.outcomeLabel(), ""
			tenant, environment := idLabel(r.tenantID), idLabel(r.environmentID)
			if err != nil {
				p := problemOf(err)
				r.outcome, r.reason = failureLabel(err), p.Type
				if r.sender.Kind != "" && refused.Counted(p.Status) {
					s.refusals.Count(r.sender)
					s.metrics.IngestRefusals.WithLabelValues(endpoint, tenant, environment).Inc()
				}
			}
			s.metrics.Ingest.WithLabelValues(endpoint, tenant, environment, r.typeLabel(), r.outcome, r.reason).Inc()
			for _, m := range r.messages {
				s.metrics.IngestMessages.WithLabelValues(endpoint, tenant, environment,
					m.MessageType, outcomeLabel(m.Outcome)).Inc()
			}
			return err
		}
	}
}

// appendLogAttrs appends what an ingest request's log line says beyond
// any request's: whose request it was and what became of it.
func (r *ingestReport) appendLogAttrs(attrs []slog.Attr) []slog.Attr {
	// The log names the code a client sent even when it is unknown; a
	// decided request names its messages' type as the metrics do.
	messageType := r.messageType
	if len(r.messages) > 0 {
		messageType = r.typeLabel()
	}
	return append(attrs,
		slog.Int64("tenant_id", r.tenantID), slog.Int64("environment_id", r.environmentID),
		slog.String("message_type", messageType), slog.Int64("message_id", r.messageID),
		slog.String("outcome", r.outcome), slog.String("reason", r.reason), slog.Int("messages", len(r.messages)))
}

// carrying labels the request by the types of the messages it carries,
// before they are decided, so that a request cut short (its client left,
// its time ran out) is counted under their type, or "mixed", too. Each
// item's type is one of the tenant's.
func (r *ingestReport) carrying(items []ingest.Request) {
	for i, item := range items {
		if i > 0 && item.MessageType.Code != r.messageType {
			r.messageType = metrics.MixedMessageTypes
			break
		}
		r.messageType = item.MessageType.Code
	}
	r.typeKnown = true
}

// typeLabel is the message_type label of the request: the code of its
// messages when they share one (every packet whose IDocs name one type,
// and most batches), metrics.MixedMessageTypes when a batch carried
// several, and metrics.UnknownMessageType for a code the tenant does not
// have, so that a client sending made-up codes cannot grow the series
// without end.
func (r *ingestReport) typeLabel() string {
	if len(r.messages) > 0 {
		code := r.messages[0].MessageType
		for _, m := range r.messages[1:] {
			if m.MessageType != code {
				return metrics.MixedMessageTypes
			}
		}
		return code
	}
	if r.messageType != "" && !r.typeKnown {
		return metrics.UnknownMessageType
	}
	return r.messageType
}

// outcomeLabel is the outcome label of a request that was decided: its
// messages' outcome when they all had one, metrics.OutcomeMixed when a
// packet or batch had several (edihub_ingest_messages_total counts each).
func (r *ingestReport) outcomeLabel() string {
	if len(r.messages) == 0 {
		return ""
	}
	outcome := r.messages[0].Outcome
	for _, m := range r.messages[1:] {
		if m.Outcome != outcome {
			return metrics.OutcomeMixed
		}
	}
	return outcomeLabel(outcome)
}

// observeLatency records every request's duration by route pattern, so
// that ids in paths do not multiply the series.
func (s *Server) observeLatency(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		status := c.Response().Status
		if err != nil {
			status = problemOf(err).Status
		}
		s.metrics.RequestDuration.WithLabelValues(c.Path(), c.Request().Method, strconv.Itoa(status)).
			Observe(time.Since(start).Seconds())
		return err
	}
}

func outcomeLabel(o ingest.Outcome) string {
	switch o {
	case ingest.Created:
		return metrics.OutcomeAccepted
	case ingest.ReplayedKey:
		return metrics.OutcomeDuplicateKey
	case ingest.DuplicateFingerprint:
		return metrics.OutcomeDuplicateFingerprint
	case ingest.DuplicateInterchange:
		return metrics.OutcomeDuplicateInterchange
	}
	return ""
}

// failureLabel is the outcome of a request that failed: stopped by its time
// limit, abandoned by its client, or rejected.
func failureLabel(err error) string {
	if ae, ok := apperr.As(err); ok {
		switch ae.Kind {
		case apperr.Timeout:
			return metrics.OutcomeTimedOut
		case apperr.ClientClosed:
			return metrics.OutcomeClientClosed
		}
	}
	return metrics.OutcomeRejected
}

func idLabel(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}
