package server

import (
	"errors"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/ingest"
)

// Every status edihub answers with says whether the same request may
// succeed later: only 503 does.
func TestProblemRetryableByStatus(t *testing.T) {
	t.Parallel()
	for kind, status := range statusOfKind {
		p := problemOf(apperr.New(kind, "some-problem", "detail"))
		require.Equal(t, status, p.Status)
		require.Equal(t, status == http.StatusServiceUnavailable, p.Retryable, "status %d", status)
	}
	others := map[string]error{
		"echo 503":     echo.NewHTTPError(http.StatusServiceUnavailable),
		"echo 404":     echo.NewHTTPError(http.StatusNotFound),
		"echo 405":     echo.NewHTTPError(http.StatusMethodNotAllowed),
		"internal 500": errors.New("boom"),
		"batch 400": &ingest.BatchError{Items: []ingest.ItemError{
			{Index: 0, Err: apperr.New(apperr.Invalid, "missing-field", "no payload")},
		}},
	}
	for name, err := range others {
		p := problemOf(err)
		require.Equal(t, p.Status == http.StatusServiceUnavailable, p.Retryable, name)
	}
}

// A problem about an Idempotency-Key names the key; others name none.
func TestProblemNamesTheIdempotencyKey(t *testing.T) {
	t.Parallel()
	require.Equal(t, "k\x01", problemOf(ingest.CheckKey("k\x01")).IdempotencyKey)
	require.Empty(t, problemOf(apperr.New(apperr.Invalid, "missing-field", "no payload")).IdempotencyKey)
	batch := problemOf(&ingest.BatchError{Items: []ingest.ItemError{{Index: 2, Err: ingest.CheckKey("k\x02").(*apperr.Error)}}})
	require.Empty(t, batch.IdempotencyKey, "the batch's own problem is about no key")
	require.Equal(t, "k\x02", batch.Errors[0].IdempotencyKey)
}
