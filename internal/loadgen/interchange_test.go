package loadgen

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/edi"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/server"
	"github.com/lefia/edihub/internal/testfactory"
)

// An interchange holds sets of consecutive order numbers, numbered within
// it, from the client's own sender under the client's control number; the
// parser edihub uses accepts its envelope and reads each set's order number
// where the bench tenant's types look for it.
func TestInterchangeBodies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		form           Form
		standard, code string
		orderPath      string
		docnum         string
		control        string
	}{
		{FormX12, edi.X12, "850", "BEG.0.BEG03", "0003", "000000012"},
		{FormEDIFACT, edi.EDIFACT, "ORDERS", "BGM.0.BGM02", "3", "12"},
	} {
		b := newBodies(tc.form, 3, 1024, 42)
		ic, err := edi.Parse(b.build(numbers{first: 7, client: 5, control: 12}), edi.DefaultLimits)
		require.NoError(t, err, tc.form)
		require.Equal(t, tc.standard, ic.Standard)
		require.Equal(t, "ZZ:L00000000420005", ic.Sender)
		require.Equal(t, "ZZ:"+interchangeReceiver, ic.Receiver)
		require.Equal(t, tc.control, ic.ControlNumber)
		require.Len(t, ic.Messages, 3)
		for i, m := range ic.Messages {
			require.Equal(t, tc.code, m.Code)
			require.Equal(t, fmt.Sprintf("PO-%016d", 7+i), gjson.GetBytes(m.View, tc.orderPath).Str, "the bench type's path")
			require.GreaterOrEqual(t, len(m.Bytes), 1024, "a set of at least the payload size")
		}
		require.Equal(t, tc.docnum, ic.Messages[2].Docnum)

		other, err := edi.Parse(b.build(numbers{first: 10, client: 5, control: 13}), edi.DefaultLimits)
		require.NoError(t, err)
		require.NotEqual(t, ic.ContentHash, other.ContentHash)
	}
}

// Against the whole server, every set of a new interchange is stored, the
// same interchange again stores nothing and is counted as answered, and each
// client is a partner whose control numbers arrive in sequence, without
// gaps.
func TestInterchangesAreStoredByEdihub(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	srv := httptest.NewServer(server.New(cfg, pool, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	t.Cleanup(srv.Close)
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "bench")
	key := testfactory.APIKey(t, pool, &testfactory.APIKeyOpts{Tenant: "bench"})
	testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Tenant: "bench", Code: "850", Fields: []string{"BEG.0.BEG03"}})
	testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Tenant: "bench", Code: "ORDERS", Fields: []string{"BGM.0.BGM02"}})

	const clients, requests, perRequest = 2, 3, 10
	stored := func() int {
		return pgtest.Count(t, pool, `SELECT count(*) FROM messages WHERE tenant_id = $1 AND environment_id = $2`, tenant.ID, env.ID)
	}
	for _, form := range []Form{FormX12, FormEDIFACT} {
		before := stored()
		res, err := Run(context.Background(), Config{
			URL: srv.URL, APIKey: key, Mix: MixNew, Form: form, PerRequest: perRequest,
			Clients: clients, Requests: requests, PayloadSize: 512,
		})
		require.NoError(t, err)
		require.Zero(t, res.Errors, "%s: %s", form, res.FirstError)
		require.Equal(t, clients*requests, res.Requests)
		require.Equal(t, before+clients*requests*perRequest, stored(), form)

		// The duplicate mix stores each client's interchange once, unmeasured,
		// and then sends it again.
		res, err = Run(context.Background(), Config{
			URL: srv.URL, APIKey: key, Mix: MixDuplicate, Form: form, PerRequest: perRequest,
			Clients: clients, Requests: requests, PayloadSize: 512,
		})
		require.NoError(t, err)
		require.Zero(t, res.Errors, "%s: %s", form, res.FirstError)
		require.Equal(t, clients*requests, res.Requests)
		require.Equal(t, before+(clients*requests+clients)*perRequest, stored(), form)
	}
	partners := pgtest.Column[int64](t, pool, `SELECT highest FROM interchange_partners
		WHERE tenant_id = $1 AND environment_id = $2 ORDER BY highest`, tenant.ID, env.ID)
	require.Equal(t, []int64{1, 1, 1, 1, requests, requests, requests, requests}, partners,
		"a partner per client, form and run, its numbers from 1")
	require.Zero(t, pgtest.Count(t, pool, `SELECT count(*) FROM interchange_gaps g
		JOIN interchange_partners p ON p.id = g.partner_id WHERE p.tenant_id = $1`, tenant.ID))
}

// A set the server did not accept makes the request an error, and so does a
// duplicate answer to a new interchange.
func TestInterchangeAnswersCountOnlyWhenEverySetIsAccepted(t *testing.T) {
	t.Parallel()
	b := newBodies(FormX12, 2, 256, 1)
	accepted := []byte(`{"interchange":{"status":"accepted"},"acknowledgment":"ISA","messages":[{"status":"accepted"},{"status":"accepted"}]}`)
	require.NoError(t, b.checkNew(200, accepted, nil))
	require.ErrorContains(t, b.checkNew(200, []byte(`{"interchange":{"status":"accepted"},"messages":[{"status":"accepted"},{"status":"duplicate"}]}`), nil),
		"1 of 2 sets accepted")
	require.ErrorContains(t, b.checkNew(200, []byte(`{"interchange":{"status":"duplicate"},"messages":[]}`), nil), `interchange "duplicate"`)
	require.ErrorContains(t, b.checkNew(422, []byte(`{"type":"interchange-control-number-reused"}`), nil), "status 422")
	replayed := http.Header{"Idempotent-Replayed": {"true"}}
	duplicate := []byte(`{"interchange":{"status":"duplicate"},"messages":[{"status":"accepted"},{"status":"accepted"}]}`)
	require.NoError(t, b.checkDuplicate(200, duplicate, replayed))
	require.ErrorContains(t, b.checkDuplicate(200, duplicate, nil), "without Idempotent-Replayed")
}

// BenchmarkCheckInterchange checks the answer to an X12 interchange of 100
// sets as edihub writes it (an acknowledgment of 2 KB, a receipt of about
// 250 bytes a set), as the client does for every request of the x12 rows.
func BenchmarkCheckInterchange(b *testing.B) {
	answer := []byte(`{"interchange":{"standard":"x12","status":"accepted","duplicate_of":null},"acknowledgment":"` +
		strings.Repeat("AK2*850*0001~AK5*A~", 120) + `","messages":[`)
	for i := range 100 {
		if i > 0 {
			answer = append(answer, ',')
		}
		answer = fmt.Appendf(answer, `{"item":{"position":%d,"docnum":"%04d"},"id":%d,"status":"accepted","duplicate":false,`+
			`"message_type":"850","docnum":"%04d","fingerprint":"%064d","received_at":"2026-12-06T09:53:56.738473Z"}`,
			i+1, i+1, 214203+i, i+1, i)
	}
	answer = append(answer, "]}"...)
	bodies := newBodies(FormX12, 100, 2048, 1)
	b.SetBytes(int64(len(answer)))
	for b.Loop() {
		if err := bodies.checkNew(200, answer, nil); err != nil {
			b.Fatal(err)
		}
	}
}
