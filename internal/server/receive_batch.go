package server

import (
	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/envelope"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/sender"
)

// receiveMessages handles POST /api/edi-hub/receive-messages: a batch of
// JSON envelopes, decided in one transaction, in order. An Idempotency-Key
// header names the whole request; an item's "idempotency_key" names that
// item; a request may use one or the other. Every item that cannot be
// accepted is listed, and refuses the batch.
func (s *Server) receiveMessages(c echo.Context) error {
	who, key, err := s.apiCaller(c)
	if err != nil {
		return err
	}
	body, err := s.readJSONBody(c)
	if err != nil {
		return err
	}
	parsed, err := envelope.ParseBatch(body, s.cfg.MaxBatchMessages)
	if err != nil {
		return err
	}
	items := make([]ingest.Request, len(parsed))
	var refused []ingest.ItemError
	for i, item := range parsed {
		req, refusal, err := batchItem(c, &who, key, item)
		if err != nil {
			return err
		}
		if refusal != nil {
			refused = append(refused, ingest.ItemError{Index: i, Err: refusal})
			continue
		}
		req.Source.Position = i + 1
		items[i] = req
	}
	if refused == nil {
		reportOf(c).carrying(items)
	}
	res, err := s.ingest.ReceiveBatch(c.Request().Context(),
		ingest.Batch{Items: items, IdempotencyKey: key, Refused: refused})
	if err != nil {
		return s.senders.Refused(who.Caller, err)
	}
	return writeBatchResult(c, res)
}

// batchItem checks one item of a batch and makes its ingest request.
// An item that cannot be accepted is a refusal; err is a failure that
// refuses the whole request (the key's lookup, made again for a type the
// cached one lacked, failed).
func batchItem(c echo.Context, who *sender.Typed, requestKey string, item envelope.BatchItem) (req ingest.Request, refusal *apperr.Error, err error) {
	if item.Err != nil {
		return ingest.Request{}, item.Err, nil
	}
	if item.HasKey {
		if requestKey != "" {
			both := apperr.New(apperr.Invalid, "invalid-idempotency-key",
				"the Idempotency-Key header names the whole request; items may not carry idempotency_key as well")
			both.IdempotencyKey = item.IdempotencyKey
			return ingest.Request{}, both, nil
		}
		if err := ingest.CheckKey(item.IdempotencyKey); err != nil {
			ae, _ := apperr.As(err)
			return ingest.Request{}, ae, nil
		}
	}
	mt, err := who.MessageType(c.Request().Context(), item.MessageType)
	if sender.IsUnknownType(err) {
		ae, _ := apperr.As(err)
		return ingest.Request{}, ae, nil
	}
	if err != nil {
		return ingest.Request{}, nil, err
	}
	req = envelopeRequest(c, who.Caller, mt, item.Envelope)
	req.Source.Endpoint = ingest.EndpointReceiveMessages
	req.IdempotencyKey = item.IdempotencyKey
	return req, nil, nil
}
