package blocked_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/blocked"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/messageview"
	"github.com/lefia/edihub/internal/payloaddiff"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// testBundle is a database whose tenant acme holds an order with a changed
// copy blocked against it.
type testBundle struct {
	pool     *pgxpool.Pool
	svc      *blocked.Service
	admin    auth.User
	original int64
	copyID   int64
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Code: "SHOP_ORDER", Fields: []string{"id"}})
	admin := testfactory.User(t, pool, &testfactory.UserOpts{Tenant: "acme"})

	deliveries := delivery.NewService(pool, 3)
	in := ingest.New(pool, time.Hour, deliveries)
	receive := func(payload string) ingest.Result {
		res, err := in.Receive(ctx, ingest.Request{
			TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: messagetype.Prepare(mt), Payload: []byte(payload),
			Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, RemoteAddr: "192.0.2.1", Actor: "test"},
		})
		require.NoError(t, err)
		return res
	}
	first := receive(`{"id": "A-1", "total": "10.00"}`)
	require.Equal(t, ingest.Created, first.Outcome)
	require.Equal(t, ingest.DuplicateFingerprint, receive(`{"id": "A-1", "total": "12.50", "note": "corrected"}`).Outcome)

	b := &testBundle{
		pool: pool, svc: blocked.New(pool, deliveries), original: first.MessageID, admin: admin,
	}
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM blocked_copies`).Scan(&b.copyID))
	return b
}

func (b *testBundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	return pgtest.Count(t, b.pool, query, args...)
}

func TestGetShowsTheDiffAgainstTheOriginal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, err := b.svc.Get(context.Background(), b.admin.Scope(), b.copyID)
	require.NoError(t, err)
	require.Equal(t, b.original, c.Original.ID)
	require.Equal(t, "192.0.2.1", c.Sender.RemoteAddr)
	require.Len(t, c.Fingerprint, 64)
	require.Nil(t, c.Released)
	require.Equal(t, []payloaddiff.Change{
		{Kind: payloaddiff.Added, Path: "/note", New: `"corrected"`},
		{Kind: payloaddiff.Changed, Path: "/total", Old: `"10.00"`, New: `"12.50"`},
	}, c.Changes)

	_, err = b.svc.Get(context.Background(), auth.TenantScope(*b.admin.TenantID+1), b.copyID)
	requireKind(t, err, apperr.NotFound)
}

// Any number of simultaneous releases of one copy store exactly one
// message and one audit event; every other one is refused and names the
// message the winner stored.
// A copy nested so deeply that indenting it would make the page many times
// its size is shown as stored.
func TestGetShowsADeepPayloadAsStored(t *testing.T) {
	t.Parallel()
	b := setup(t)
	deep := `{"id":"A-1","deep":` + strings.Repeat("[", 500) + strings.TrimSuffix(strings.Repeat("1,", 20_000), ",") +
		strings.Repeat("]", 500) + "}"
	_, err := b.pool.Exec(context.Background(), `UPDATE blocked_copies SET payload = $1 WHERE id = $2`, deep, b.copyID)
	require.NoError(t, err)
	c, err := b.svc.Get(context.Background(), b.admin.Scope(), b.copyID)
	require.NoError(t, err)
	require.True(t, c.Payload.AsStored)
	require.Equal(t, deep, shown(c.Payload))

	_, err = b.pool.Exec(context.Background(), `UPDATE blocked_copies SET payload = '{"id":"A-1"}' WHERE id = $1`, b.copyID)
	require.NoError(t, err)
	c, err = b.svc.Get(context.Background(), b.admin.Scope(), b.copyID)
	require.NoError(t, err)
	require.False(t, c.Payload.AsStored)
	require.Equal(t, "{\n  \"id\": \"A-1\"\n}", shown(c.Payload))
}

// shown is the text of a payload as its page shows it.
func shown(v messageview.PayloadView) string {
	var text strings.Builder
	for _, s := range v.Segments {
		text.WriteString(s.Text)
	}
	return text.String()
}

// A large copy's page shows the start of its payload and of the bytes it
// arrived as, never all of them; the download reads them whole, a part at
// a time, exactly as received.
func TestGetShowsTheStartOfALargeCopy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	large := `{"id":"A-1","items":[` + strings.TrimSuffix(strings.Repeat(`{"sku":"A-1","qty":1},`, 50_000), ",") + `]}`
	xml := "<ORDERS05>" + strings.Repeat("<E1EDP01><MATNR>A-1</MATNR></E1EDP01>\n", 20_000) + "</ORDERS05>"
	_, err := b.pool.Exec(ctx, `UPDATE blocked_copies SET payload = $1, received_bytes = $2, content_type = 'application/xml' WHERE id = $3`,
		large, []byte(xml), b.copyID)
	require.NoError(t, err)

	c, err := b.svc.Get(ctx, b.admin.Scope(), b.copyID)
	require.NoError(t, err)
	require.True(t, c.Payload.Cut)
	require.Equal(t, len(large), c.Payload.Bytes)
	text := shown(c.Payload)
	require.LessOrEqual(t, len(text), messageview.MaxShownBytes)
	require.Greater(t, len(text), messageview.MaxShownBytes-100, "the start up to its last whole line")
	require.True(t, strings.HasSuffix(text, "\n"), "the text stops at the end of a line")
	require.True(t, c.Received.Cut)
	require.Equal(t, len(xml), c.Received.Size)
	require.LessOrEqual(t, len(c.Received.Text), messageview.MaxShownBytes)
	require.True(t, strings.HasPrefix(xml, c.Received.Text))

	var whole []byte
	for len(whole) < len(xml) {
		p, err := b.svc.ReceivedPart(ctx, b.admin.Scope(), b.copyID, int64(len(whole)), 100_000)
		require.NoError(t, err)
		require.Equal(t, int64(len(xml)), p.Size)
		require.Equal(t, "application/xml", p.ContentType)
		require.LessOrEqual(t, len(p.Bytes), 100_000)
		whole = append(whole, p.Bytes...)
	}
	require.Equal(t, xml, string(whole))
	_, err = b.svc.ReceivedPart(ctx, auth.TenantScope(*b.admin.TenantID+1), b.copyID, 0, 10)
	requireKind(t, err, apperr.NotFound)
}

func TestConcurrentReleasesStoreOneMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const n = 8
	var (
		wg   sync.WaitGroup
		ids  = make([]int64, n)
		errs = make([]error, n)
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			ids[i], errs[i] = b.svc.Release(context.Background(), b.admin, b.copyID, fmt.Sprintf("release %d", i))
		})
	}
	close(start)
	wg.Wait()

	var winner int64
	for i, err := range errs {
		if err == nil {
			require.Zero(t, winner, "a second release succeeded")
			winner = ids[i]
		}
	}
	require.NotZero(t, winner)
	for _, err := range errs {
		if err != nil {
			requireKind(t, err, apperr.Conflict)
			require.EqualError(t, err, fmt.Sprintf("this copy was already released as message %d", winner))
		}
	}
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events WHERE action = $1`, auditevent.DuplicateReleased))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM blocked_copies WHERE released_message_id = $1`, winner))
	// The original keeps its claim on the fingerprint.
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages WHERE id = $1 AND fingerprint IS NOT NULL`, b.original))
}

func TestReleaseRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	viewer := b.admin
	viewer.Role = auth.RoleViewer
	other := b.admin
	other.TenantID = new(*b.admin.TenantID + 1)

	for _, tc := range []struct {
		name   string
		user   auth.User
		id     int64
		reason string
		kind   apperr.Kind
	}{
		{"a viewer", viewer, b.copyID, "looks new", apperr.Forbidden},
		{"another tenant's admin", other, b.copyID, "looks new", apperr.NotFound},
		{"a copy that does not exist", b.admin, b.copyID + 1, "looks new", apperr.NotFound},
		{"no reason", b.admin, b.copyID, " \t\n", apperr.Invalid},
		{"a reason too long", b.admin, b.copyID, strings.Repeat("é", blocked.MaxReasonLength+1), apperr.Invalid},
	} {
		_, err := b.svc.Release(ctx, tc.user, tc.id, tc.reason)
		requireKind(t, err, tc.kind)
	}
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages`))

	// The longest reason fits, counted in characters, not bytes.
	_, err := b.svc.Release(ctx, b.admin, b.copyID, strings.Repeat("é", blocked.MaxReasonLength))
	require.NoError(t, err)
}

func TestOfMessageTellsWhereAReleasedMessageCameFrom(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	scope := b.admin.Scope()

	before, err := b.svc.OfMessage(ctx, scope, b.original)
	require.NoError(t, err)
	require.Equal(t, blocked.Copies{Kept: 1}, before)

	id, err := b.svc.Release(ctx, b.admin, b.copyID, "  a corrected order  ")
	require.NoError(t, err)
	after, err := b.svc.OfMessage(ctx, scope, b.original)
	require.NoError(t, err)
	require.Equal(t, blocked.Copies{Kept: 1, Released: 1}, after)

	released, err := b.svc.OfMessage(ctx, scope, id)
	require.NoError(t, err)
	require.NotNil(t, released.Origin)
	require.Equal(t, b.copyID, released.Origin.CopyID)
	require.Equal(t, b.original, released.Origin.OriginalID)
	require.Equal(t, "admin@acme.example", released.Origin.By)
	require.Equal(t, "a corrected order", released.Origin.Reason, "trimmed")

	c, err := b.svc.Get(ctx, scope, b.copyID)
	require.NoError(t, err)
	require.NotNil(t, c.Released)
	require.Equal(t, id, c.Released.MessageID)

	hidden, err := b.svc.OfMessage(ctx, auth.TenantScope(*b.admin.TenantID+1), id)
	require.NoError(t, err)
	require.Equal(t, blocked.Copies{}, hidden, "another tenant learns nothing")
}

func requireKind(t *testing.T, err error, kind apperr.Kind) {
	t.Helper()
	ae, ok := apperr.As(err)
	require.True(t, ok, "a user-facing error, not %v", err)
	require.Equal(t, kind, ae.Kind, ae.Detail)
}
