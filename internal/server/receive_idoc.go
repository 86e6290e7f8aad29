package server

import (
	"errors"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/envelope"
	"github.com/lefia/edihub/internal/idocxml"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/sender"
)

// receiveIDocXML handles an IDoc-XML document sent to receive-message, as
// SAP's XML HTTP ports send it. Each IDoc is one message, read through its
// JSON view; a document of one IDoc is answered as a JSON envelope is, a
// packet of several with 200 and one answer per IDoc. Any IDoc that cannot
// be accepted refuses the whole document, so that SAP resends all of it.
func (s *Server) receiveIDocXML(c echo.Context, who sender.Typed, key, charset string) error {
	body, err := s.readBody(c, idocXMLBodyCost)
	if err != nil {
		return err
	}
	limits := idocxml.DefaultLimits
	limits.MaxIDocs = s.cfg.MaxBatchMessages
	doc, err := idocxml.Parse(body, charset, limits)
	if err != nil {
		return idocProblem(err, limits)
	}
	// Its views and own documents are read until the messages are decided,
	// which the answer follows; nothing is left holding them after that.
	defer doc.Release()
	named := c.QueryParam("message_type")
	contentType := c.Request().Header.Get(echo.HeaderContentType)
	items := make([]ingest.Request, len(doc.IDocs))
	// Every message of the request comes from where the request came from.
	from := apiSource(c, who.Caller, ingest.EndpointReceiveMessage)
	for i, idoc := range doc.IDocs {
		code := named
		if code == "" {
			code = idoc.IDocType
		}
		if code == "" {
			return apperr.New(apperr.Invalid, "invalid-payload",
				"%s: the control record has no IDOCTYP; name the message type with ?message_type=", idocName(doc, idoc))
		}
		reportOf(c).messageType = code
		mt, err := who.MessageType(c.Request().Context(), code)
		switch {
		case sender.IsUnknownType(err):
			return apperr.New(apperr.Unprocessable, "unknown-message-type",
				"%s: message type %q is not configured for this tenant", idocName(doc, idoc), code)
		case err != nil:
			return err
		}
		reportOf(c).typeKnown = true
		if err := envelope.CheckDocnumOf(func() string { return fmt.Sprintf("the DOCNUM of IDoc %d", idoc.Position) }, idoc.Docnum); err != nil {
			return err
		}
		source := from
		if len(doc.IDocs) > 1 {
			source.Position = idoc.Position
		}
		items[i] = ingest.Request{
			TenantID: who.TenantID, EnvironmentID: who.EnvironmentID, MessageType: mt,
			Docnum: idoc.Docnum, Payload: idoc.View, CanonicalPayload: idoc.Canonical,
			ShapeIsContent: true, Source: source,
			Received: &ingest.Received{
				ContentType: contentType, Bytes: doc.Own(body, idoc), Position: idoc.Position, Of: len(doc.IDocs),
			},
		}
	}
	reportOf(c).carrying(items)
	ctx := c.Request().Context()
	if len(items) == 1 {
		items[0].IdempotencyKey = key
		res, err := s.ingest.Receive(ctx, items[0])
		if err != nil {
			return s.senders.Refused(who.Caller, err)
		}
		return writeResult(c, res)
	}
	res, err := s.ingest.ReceiveBatch(ctx, ingest.Batch{Items: items, IdempotencyKey: key})
	var refused *ingest.BatchError
	if errors.As(err, &refused) {
		// The first IDoc at fault is named; SAP shows one status text.
		first := refused.Items[0]
		return &apperr.Error{Kind: first.Err.Kind, Type: first.Err.Type, IdempotencyKey: first.Err.IdempotencyKey,
			Detail: idocName(doc, doc.IDocs[first.Index]) + ": " + first.Err.Detail}
	}
	if err != nil {
		return s.senders.Refused(who.Caller, err)
	}
	return writeBatchResult(c, res)
}

// idocName names an IDoc in a problem's detail: by its position when the
// document holds several, and by its DOCNUM.
func idocName(doc idocxml.Document, idoc idocxml.IDoc) string {
	if len(doc.IDocs) == 1 {
		return "IDoc DOCNUM " + idoc.Docnum
	}
	return fmt.Sprintf("IDoc %d of %d (DOCNUM %s)", idoc.Position, len(doc.IDocs), idoc.Docnum)
}

// idocProblem turns the parser's refusals, under limits, into problems.
func idocProblem(err error, limits idocxml.Limits) error {
	var malformed *idocxml.MalformedError
	var invalid *idocxml.InvalidError
	var tooMany *idocxml.TooManyIDocsError
	var tooDense *idocxml.TooManyElementsError
	switch {
	case errors.As(err, &malformed):
		return &apperr.Error{Kind: apperr.Invalid, Type: "malformed-xml", Detail: "the body is not well-formed XML: " + malformed.Reason}
	case errors.As(err, &invalid):
		return &apperr.Error{Kind: apperr.Invalid, Type: "invalid-payload", Detail: "the body is not an IDoc-XML document: " + invalid.Error()}
	case errors.As(err, &tooMany):
		// SAP resends a refused packet as it is: the detail tells its
		// administrator what to change (WE20's packet size).
		return apperr.New(apperr.TooLarge, "payload-too-large",
			"the packet holds more than %d IDocs, the most one request may carry (MAX_BATCH_MESSAGES); "+
				"send smaller packets (the partner profile's Pack. Size)", tooMany.Max)
	case errors.As(err, &tooDense):
		return apperr.New(apperr.TooLarge, "payload-too-large",
			"%s, the most a body of its size may hold: one for every %d bytes, and %d in all", err, limits.ElementBytes, limits.MaxElements)
	case errors.Is(err, idocxml.ErrUnsupportedCharset):
		return &apperr.Error{Kind: apperr.UnsupportedMediaType, Type: "unsupported-media-type", Detail: err.Error()}
	}
	return err
}
