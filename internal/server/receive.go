package server

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/envelope"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/refused"
	"github.com/lefia/edihub/internal/sender"
)

// receiveMessage handles POST /api/edi-hub/receive-message: a JSON
// envelope, or an IDoc-XML document (see receiveIDocXML).
func (s *Server) receiveMessage(c echo.Context) error {
	who, key, err := s.apiCaller(c)
	if err != nil {
		return err
	}
	media, err := mediaTypeOf(c.Request())
	if err != nil {
		return err
	}
	switch {
	case media.xml:
		return s.receiveIDocXML(c, who, key, media.charset)
	case media.edi || media.text:
		return s.receiveInterchange(c, who, key, media.text)
	}
	body, err := s.readBody(c, jsonBodyCost)
	if err != nil {
		return err
	}
	env, err := envelope.Parse(body)
	if err != nil {
		return err
	}
	reportOf(c).messageType = env.MessageType
	mt, err := who.MessageType(c.Request().Context(), env.MessageType)
	if err != nil {
		return err
	}
	reportOf(c).typeKnown = true
	req := envelopeRequest(c, who.Caller, mt, env)
	req.IdempotencyKey = key
	res, err := s.ingest.Receive(c.Request().Context(), req)
	if err != nil {
		return s.senders.Refused(who.Caller, err)
	}
	return writeResult(c, res)
}

// apiCaller authenticates an ingest request made with an API key and
// returns the caller with its tenant's message types, and the request's
// Idempotency-Key ("" when there is none).
func (s *Server) apiCaller(c echo.Context) (sender.Typed, string, error) {
	var who sender.Typed
	err := s.withAPIKey(c, func(key string) (err error) {
		who, err = s.senders.APIKeyWithTypes(c.Request().Context(), key)
		return err
	})
	if err != nil {
		return who, "", err
	}
	report := reportOf(c)
	report.tenantID, report.environmentID = who.TenantID, who.EnvironmentID
	report.sender = refused.Subject{Kind: refused.KindAPIKey, Key: strconv.FormatInt(who.APIKeyID, 10), TenantID: who.TenantID}
	idempotencyKey, err := idempotencyKey(c.Request())
	return who, idempotencyKey, err
}

// envelopeRequest is the ingest request of a JSON envelope.
func envelopeRequest(c echo.Context, who sender.Caller, mt messagetype.Type, env envelope.Envelope) ingest.Request {
	return ingest.Request{
		TenantID: who.TenantID, EnvironmentID: who.EnvironmentID, MessageType: mt,
		Docnum: env.Docnum, Payload: env.Payload, Source: apiSource(c, who, ingest.EndpointReceiveMessage),
	}
}

// apiSource is the source of a message received with an API key.
func apiSource(c echo.Context, who sender.Caller, endpoint string) ingest.Source {
	source := requestSource(c)
	source.Endpoint, source.Actor = endpoint, who.Actor()
	return source
}

// requestSource is what the request says of where a message came from.
func requestSource(c echo.Context) ingest.Source {
	return ingest.Source{RemoteAddr: c.RealIP(), Headers: senderHeaders(c.Request().Header), RequestID: requestID(c)}
}

// writeResult answers 201 for a new message and 200 with
// Idempotent-Replayed for a duplicate of either kind.
func writeResult(c echo.Context, res ingest.Result) error {
	report := reportOf(c)
	report.messageID = res.MessageID
	report.messages = append(report.messages, res)
	status := http.StatusCreated
	if res.Outcome != ingest.Created {
		status = http.StatusOK
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	return c.JSONBlob(status, res.Body)
}

// writeBatchResult answers a request of several messages: 200 with each
// one's answer, and Idempotent-Replayed when the whole request repeated an
// Idempotency-Key.
func writeBatchResult(c echo.Context, res ingest.BatchResult) error {
	report := reportOf(c)
	report.messages = append(report.messages, res.Results...)
	if res.Replayed {
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	return c.JSONBlob(http.StatusOK, res.Body)
}

// senderHeaderNames are the request headers kept with a blocked copy whose
// content changed, so that an admin can tell which system sent it: they
// name a client or a delivery and prove nothing. Credentials (Authorization,
// cookies) and signatures are never among them; a header joins this list
// only if a copy of it in the database opens nothing.
var senderHeaderNames = []string{
	"User-Agent", "webhook-id", "X-GitHub-Delivery", "X-GitHub-Hook-ID",
	"X-Shopify-Webhook-Id", "X-Shopify-Shop-Domain", "Stripe-Account",
}

// maxSenderHeaderLength bounds each kept header value; a sender's name
// needs far less, and the copy's row should not grow with a padded header.
const maxSenderHeaderLength = 256

// senderHeaders picks the sender-identifying headers of a request, named
// as in senderHeaderNames. Control characters are dropped, so the values
// are plain text that jsonb accepts (it refuses \u0000).
func senderHeaders(h http.Header) map[string]string {
	var kept map[string]string
	for _, name := range senderHeaderNames {
		v := h.Get(name)
		if v == "" {
			continue
		}
		v = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return -1
			}
			return r
		}, v)
		if len(v) > maxSenderHeaderLength {
			v = strings.ToValidUTF8(v[:maxSenderHeaderLength], "")
		}
		if kept == nil {
			kept = make(map[string]string, len(senderHeaderNames))
		}
		kept[name] = v
	}
	return kept
}

// idempotencyKey returns the request's Idempotency-Key, "" when absent.
func idempotencyKey(r *http.Request) (string, error) {
	values, present := r.Header[http.CanonicalHeaderKey("Idempotency-Key")]
	if !present {
		return "", nil
	}
	if len(values) != 1 {
		return "", apperr.New(apperr.Invalid, "invalid-idempotency-key", "send at most one Idempotency-Key header")
	}
	key, err := idempotencyKeyContent(values[0])
	if err != nil {
		return "", err
	}
	if err := ingest.CheckKey(key); err != nil {
		return "", err
	}
	return key, nil
}

// idempotencyKeyContent reads an Idempotency-Key value. The IETF draft
// defines the header as a Structured Field string (RFC 8941, section 3.3.3):
// a value in double quotes is read as its content, so that `"abc"` and `abc`
// name the same key; a backslash may escape only `"` and `\`, and nothing
// may follow the closing quote. Any other value is a bare key, as most
// clients send it, and is used as it is.
func idempotencyKeyContent(value string) (string, error) {
	if !strings.HasPrefix(value, `"`) {
		return value, nil
	}
	malformed := func(format string, args ...any) error {
		return apperr.New(apperr.Invalid, "invalid-idempotency-key",
			"Idempotency-Key is a quoted string whose "+format, args...)
	}
	var content strings.Builder
	for i := 1; i < len(value); i++ {
		switch c := value[i]; {
		case c == '\\':
			i++
			if i == len(value) || (value[i] != '"' && value[i] != '\\') {
				return "", malformed(`backslash at byte %d escapes neither '"' nor '\'`, i)
			}
			content.WriteByte(value[i])
		case c == '"':
			if i != len(value)-1 {
				return "", malformed("closing quote at byte %d is followed by more characters", i+1)
			}
			return content.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", malformed("byte %d is not a printable ASCII character", i+1)
		default:
			content.WriteByte(c)
		}
	}
	return "", malformed("closing quote is missing")
}

// mediaType is what a request's Content-Type says about its body.
type mediaType struct {
	xml     bool   // IDoc-XML rather than JSON
	edi     bool   // an X12 or EDIFACT interchange
	text    bool   // text/plain: an interchange when the body starts as one
	charset string // the charset parameter, "" when absent
}

// xmlMediaTypes are the media types IDoc-XML arrives with: SAP's XML HTTP
// port sends application/x-sap.idoc, other senders the generic XML types.
var xmlMediaTypes = []string{"application/xml", "text/xml", "application/x-sap.idoc"}

// ediMediaTypes are the media types of X12 and EDIFACT interchanges (RFC
// 1767); text/plain is read as an interchange when the body starts as one.
var ediMediaTypes = []string{"application/edi-x12", "application/edifact"}

// maxContentTypeLength bounds the Content-Type kept with a stored message.
const maxContentTypeLength = 255

// mediaTypeOf accepts JSON, IDoc-XML and X12 and EDIFACT interchanges.
func mediaTypeOf(r *http.Request) (mediaType, error) {
	header := r.Header.Get(echo.HeaderContentType)
	media, params, err := mime.ParseMediaType(header)
	switch {
	case err != nil || len(header) > maxContentTypeLength:
	case media == "application/json" || strings.HasSuffix(media, "+json"):
		return mediaType{}, nil
	case slices.Contains(xmlMediaTypes, media):
		return mediaType{xml: true, charset: params["charset"]}, nil
	case slices.Contains(ediMediaTypes, media):
		return mediaType{edi: true}, nil
	case media == "text/plain":
		return mediaType{text: true}, nil
	}
	return mediaType{}, apperr.New(apperr.UnsupportedMediaType, "unsupported-media-type",
		unsupportedDetail)
}

// unsupportedDetail names what receive-message takes.
const unsupportedDetail = "send a JSON envelope with 'Content-Type: application/json', IDoc-XML with " +
	"'Content-Type: application/xml', 'text/xml' or 'application/x-sap.idoc', or an X12 or EDIFACT " +
	"interchange with 'Content-Type: application/edi-x12' or 'application/edifact'"

// readJSONBody checks that the body is JSON and reads it.
func (s *Server) readJSONBody(c echo.Context) ([]byte, error) {
	if err := requireJSON(c.Request()); err != nil {
		return nil, err
	}
	return s.readBody(c, jsonBodyCost)
}

// requireJSON refuses a request whose Content-Type is not JSON.
func requireJSON(r *http.Request) error {
	media, err := mediaTypeOf(r)
	if err == nil && (media.xml || media.edi || media.text) {
		err = apperr.New(apperr.UnsupportedMediaType, "unsupported-media-type",
			"send the body as JSON with 'Content-Type: application/json'")
	}
	return err
}

// What a body holds of the budget of bytes in process, as a multiple of
// its bytes: what working on it costs beside what a JSON body of the same
// size costs, and as much again as room for the collector. The memory limit
// is three bytes a byte of the budget (cli.memoryLimit); a format whose
// requests filled it with live heap kept the collector and the scavenger,
// which returns pages to the system at every large allocation under the
// limit, running all the time: the room cut edihub's CPU per request by a
// tenth for packets and by half for interchanges (docs/performance.md, "A
// budget that leaves the collector room"). An IDoc-XML packet peaked at
// about 10.5 times its bytes: each IDoc is read into a tree, and kept as its
// JSON view, its canonical form and its own bytes. An X12 or EDIFACT
// interchange peaked at about 23 times: each element of each segment is
// named in its JSON view ("A 10 MiB interchange"). So a cost was about two
// thirds of the peak. Since the views are no longer sent to be stored, the
// peaks are about 8 and 10 times ("Views rebuilt, not stored"), but an
// interchange at 7 bought no throughput and a higher p99: more
// interchanges worked on at once only wait longer for PostgreSQL.
const (
	jsonBodyCost    = 1
	idocXMLBodyCost = 7
	ediBodyCost     = 14
)

// readBody reads at most MAX_BODY_BYTES, taking its share of the budget
// of bytes in process, cost times its bytes, as the bytes arrive (see
// bodyBudget), and refuses a sender that pauses for
// REQUEST_BODY_IDLE_TIMEOUT.
func (s *Server) readBody(c echo.Context, cost int64) ([]byte, error) {
	r := c.Request()
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return nil, s.bodyTooLarge()
	}
	// A body of unknown length may be as large as the limit.
	need := r.ContentLength
	if need < 0 {
		need = s.cfg.MaxBodyBytes
	}
	body := newIdleBody(c, http.MaxBytesReader(c.Response(), r.Body, s.cfg.MaxBodyBytes), s.cfg.RequestBodyIdleTimeout)
	defer body.done()
	buf, err := s.bodies.read(c, body, need, cost)
	var maxErr *http.MaxBytesError
	late := body.problem(err)
	switch {
	case err == nil:
		return buf, nil
	case errors.As(err, &maxErr):
		return nil, s.bodyTooLarge()
	case late != nil:
		return nil, late
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return nil, err // waited for the budget past the time limit: see interrupted
	}
	return nil, apperr.New(apperr.Invalid, "incomplete-body", "the body could not be read completely")
}

// bodyTooLarge is readBody's answer to a body over MAX_BODY_BYTES; it is
// made only then, not formatted (and allocated) for every body read.
func (s *Server) bodyTooLarge() error {
	return apperr.New(apperr.TooLarge, "payload-too-large",
		"the body is larger than the limit of %d bytes", s.cfg.MaxBodyBytes)
}
