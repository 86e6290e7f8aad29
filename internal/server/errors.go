package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/web"
)

// problem is an RFC 9457 problem details body.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	// Instance names the request (see requestInstance), so that a client's
	// report can be matched with the server's log lines.
	Instance string `json:"instance,omitempty"`
	// Errors lists, for a refused batch, every item that cannot be accepted.
	Errors []itemProblem `json:"errors,omitempty"`
	// Acknowledgment is, for a refused X12 or EDIFACT interchange, the
	// acknowledgment (TA1, CONTRL) that rejects it.
	Acknowledgment string `json:"acknowledgment,omitempty"`
	// Retryable and IdempotencyKey are the members idempot.dev's clients
	// read: whether sending the same request again later may succeed, and
	// the key an Idempotency-Key error is about.
	Retryable      bool   `json:"retryable"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// retryAfter, when set, is the Retry-After the answer carries.
	retryAfter time.Duration
}

// itemProblem is why one item of a batch (0 for the first) was refused.
type itemProblem struct {
	Index          int    `json:"index"`
	Type           string `json:"type"`
	Detail         string `json:"detail"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// requestInstancePrefix starts every problem's instance; the request id
// follows it.
const requestInstancePrefix = "urn:edihub:request:"

// requestInstance is the URI naming the request c: its X-Request-Id, which
// the access log and the failure log also record. The id may be the
// client's own, so it is escaped to keep the URI valid.
func requestInstance(c echo.Context) string {
	id := requestID(c)
	if id == "" {
		return ""
	}
	return requestInstancePrefix + url.PathEscape(id)
}

// retryAfterSeconds is what a client is told to wait when the database is
// unavailable: long enough for a failover, short enough for SAP's retries.
const retryAfterSeconds = "5"

var statusOfKind = map[apperr.Kind]int{
	apperr.Invalid:              http.StatusBadRequest,
	apperr.Unauthorized:         http.StatusUnauthorized,
	apperr.NotFound:             http.StatusNotFound,
	apperr.Conflict:             http.StatusConflict,
	apperr.Unprocessable:        http.StatusUnprocessableEntity,
	apperr.TooLarge:             http.StatusRequestEntityTooLarge,
	apperr.UnsupportedMediaType: http.StatusUnsupportedMediaType,
	apperr.Unavailable:          http.StatusServiceUnavailable,
	apperr.Forbidden:            http.StatusForbidden,
	apperr.TooManyRequests:      http.StatusTooManyRequests,
	apperr.Timeout:              http.StatusGatewayTimeout,
	apperr.ClientClosed:         statusClientClosedRequest,
	apperr.ClientTimeout:        http.StatusRequestTimeout,
}

// statusClientClosedRequest is the status a request gets in logs and
// metrics when its client left before the answer (nginx's 499): no client
// reads it, and it keeps departed clients apart from server errors.
const statusClientClosedRequest = 499

// statusText is the title of a problem: the standard text of its status.
func statusText(status int) string {
	if status == statusClientClosedRequest {
		return "Client Closed Request"
	}
	return http.StatusText(status)
}

// handleError is the one place where an error becomes an HTTP answer. The
// client sees a stable type and a human detail; internal causes are logged.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	p := problemOf(err)
	p.Instance = requestInstance(c)
	s.logFailure(err, p, c)
	if p.retryAfter > 0 {
		// Rounded up: a client that waits what it is told is let through.
		// Pages get it too, for a person's tools and for htmx.
		c.Response().Header().Set("Retry-After", strconv.FormatInt(int64((p.retryAfter+time.Second-1)/time.Second), 10))
	}
	if wantsPage(c.Request()) {
		// A person in a browser gets the same answer as a page.
		if err := render(c, p.Status, errorPage(c, p)); err != nil {
			s.log.Error("write error page", "error", err)
		}
		return
	}
	h := c.Response().Header()
	switch p.Status {
	case http.StatusServiceUnavailable:
		if h.Get("Retry-After") == "" {
			h.Set("Retry-After", retryAfterSeconds)
		}
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="edihub"`)
	}
	body, _ := json.Marshal(p) // a struct of strings and ints always marshals
	if err := c.Blob(p.Status, "application/problem+json", body); err != nil {
		s.log.Error("write error response", "error", err)
	}
}

// errorPage is the page a person sees for p: inside the admin frame when
// they are signed in (requireUser ran, as it does for every admin path that
// names no page), so that a wrong link does not lose their navigation.
func errorPage(c echo.Context, p problem) templ.Component {
	if p.Status == http.StatusNotFound && p.Detail == http.StatusText(http.StatusNotFound) {
		// A path that names no page: say which, rather than the status twice.
		p.Title, p.Detail = "Page not found", "There is no page at "+bounded(c.Request().URL.Path)+"."
	}
	if currentUser(c).ID != 0 {
		return web.AdminErrorPage(page(c, p.Title, ""), p.Status, p.Detail, requestID(c))
	}
	return web.ErrorPage(p.Status, p.Title, p.Detail, requestID(c))
}

// isPage reports whether path is one of the pages for people (the landing
// page and the admin pages) rather than the API, whose clients read
// problem+json.
func isPage(path string) bool {
	return path == "/" || path == adminpath.Prefix || strings.HasPrefix(path, adminpath.Prefix+"/")
}

// wantsPage reports whether an error is answered with a page: on the pages'
// paths, and on any other path outside the API that a browser asked for
// (a mistyped address), rather than a problem document a person cannot read.
func wantsPage(r *http.Request) bool {
	return isPage(r.URL.Path) ||
		!strings.HasPrefix(r.URL.Path, "/api/") && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// problemOf maps an error to the answer a client gets: the one mapping of
// error kinds to statuses. It has no side effects, so metrics can use it.
func problemOf(err error) problem {
	p := problemWithoutRetry(err)
	// As idempot.dev defines the member: true on 503 and on a 409 for a
	// key whose first request is in flight, false otherwise. edihub has no
	// such 409 (the second request waits for the first and replays its
	// answer); a throttled client (429) is told when to come back by
	// Retry-After instead.
	p.Retryable = p.Status == http.StatusServiceUnavailable
	return p
}

func problemWithoutRetry(err error) problem {
	var batch *ingest.BatchError
	if errors.As(err, &batch) {
		p := problem{Type: "invalid-batch", Title: http.StatusText(http.StatusBadRequest), Status: http.StatusBadRequest,
			Detail: fmt.Sprintf("%d of the batch's messages cannot be accepted, so none was stored", len(batch.Items))}
		for _, item := range batch.Items {
			p.Errors = append(p.Errors, itemProblem{Index: item.Index, Type: item.Err.Type, Detail: item.Err.Detail,
				IdempotencyKey: item.Err.IdempotencyKey})
		}
		return p
	}
	if errors.Is(err, db.ErrCommitUnconfirmed) {
		err = noSynchronousStandby(err, "the database's primary stored this on its own machine and no synchronous standby confirmed it, so it is not acknowledged (REQUIRE_SYNCHRONOUS_STANDBY); send it again later: it is then answered as the duplicate or replay of what was stored")
	}
	if ae, ok := apperr.As(err); ok {
		status := statusOfKind[ae.Kind]
		p := problem{Type: ae.Type, Title: statusText(status), Status: status, Detail: ae.Detail, IdempotencyKey: ae.IdempotencyKey,
			retryAfter: ae.RetryAfter}
		var rejected *ingest.RejectedError
		if errors.As(err, &rejected) {
			p.Acknowledgment = string(rejected.Acknowledgment)
		}
		return p
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return problem{Type: typeOfStatus(he.Code), Title: http.StatusText(he.Code), Status: he.Code, Detail: httpErrorDetail(he)}
	}
	if db.IsUnavailable(err) {
		return problem{
			Type: "database-unavailable", Title: http.StatusText(http.StatusServiceUnavailable),
			Status: http.StatusServiceUnavailable,
			Detail: "the message store is unavailable right now; nothing was stored, retry later",
		}
	}
	return problem{
		Type: "internal-error", Title: http.StatusText(http.StatusInternalServerError),
		Status: http.StatusInternalServerError, Detail: "an internal error occurred; it has been logged",
	}
}

// logFailure logs what the client is not shown: the internal cause of a
// user-facing error, and every server-side failure. A request stopped by its
// time limit is a warning and a departed client only information: neither
// is a fault of the server that someone must be woken for.
func (s *Server) logFailure(err error, p problem, c echo.Context) {
	ae, userFacing := apperr.As(err)
	switch {
	case userFacing && ae.Kind == apperr.ClientClosed:
		s.log.Info("client closed the request", "error", bounded(ae.Err.Error()), "request_id", requestID(c))
	case userFacing && ae.Kind == apperr.Timeout:
		s.log.Warn("request timed out", "error", bounded(ae.Err.Error()), "request_id", requestID(c))
	case userFacing && ae.Err != nil:
		s.log.Warn("request failed", "type", ae.Type, "error", bounded(ae.Err.Error()), "request_id", requestID(c))
	case userFacing:
	case p.Type == "no-synchronous-standby":
		s.log.Warn("commit not confirmed by a synchronous standby", "error", bounded(err.Error()), "request_id", requestID(c))
	case p.Type == "database-unavailable":
		s.log.Error("database unavailable", "error", bounded(err.Error()), "request_id", requestID(c))
	case p.Status >= http.StatusInternalServerError:
		s.log.Error("internal error", "error", bounded(err.Error()), "request_id", requestID(c))
	}
}

func typeOfStatus(code int) string {
	switch code {
	case http.StatusNotFound:
		return "not-found"
	case http.StatusMethodNotAllowed:
		return "method-not-allowed"
	case http.StatusRequestEntityTooLarge:
		return "payload-too-large"
	case http.StatusServiceUnavailable:
		return "service-unavailable"
	}
	return "http-error"
}

func httpErrorDetail(he *echo.HTTPError) string {
	if msg, ok := he.Message.(string); ok {
		return msg
	}
	return http.StatusText(he.Code)
}

func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}
