package ingest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// batchSite is a tenant with one order type keyed by the order id, and the
// ingest service that stores into it.
type batchSite struct {
	pool *pgxpool.Pool
	in   *ingest.Service
	req  func(payload string) ingest.Request
}

func newBatchSite(t *testing.T) *batchSite {
	t.Helper()
	pool := pgtest.Pool(t)
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	window := 24
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}, WindowHours: &window})
	return &batchSite{
		pool: pool,
		in:   ingest.New(pool, time.Hour, delivery.NewService(pool, 3)),
		req: func(payload string) ingest.Request {
			return ingest.Request{
				TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: messagetype.Prepare(mt), Payload: []byte(payload),
				Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessages, RemoteAddr: "192.0.2.1", Actor: "test"},
			}
		},
	}
}

func (s *batchSite) batch(t *testing.T, payloads ...string) []ingest.Result {
	t.Helper()
	b := ingest.Batch{}
	for _, p := range payloads {
		b.Items = append(b.Items, s.req(p))
	}
	res, err := s.in.ReceiveBatch(context.Background(), b)
	require.NoError(t, err)
	require.Len(t, res.Results, len(payloads))
	return res.Results
}

func (s *batchSite) count(t *testing.T, query string) int {
	t.Helper()
	var n int
	require.NoError(t, s.pool.QueryRow(context.Background(), query).Scan(&n))
	return n
}

// A batch larger than one statement's bytes goes in several, in order, in
// the one transaction: a copy in a later statement is the duplicate of its
// original in an earlier one, and the results keep the batch's order.
func TestBatchBeyondOneStatement(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	filler := strings.Repeat("x", 200<<10)
	var payloads []string
	for i := range 12 { // 2.4 MiB: three statements
		payloads = append(payloads, fmt.Sprintf(`{"id": "%d", "filler": %q}`, i, filler))
	}
	payloads = append(payloads, payloads[0], fmt.Sprintf(`{"id": "11", "filler": %q}`, filler+"changed"))
	res := s.batch(t, payloads...)
	for i := range 12 {
		require.Equal(t, ingest.Created, res[i].Outcome, "item %d", i)
	}
	require.Equal(t, ingest.DuplicateFingerprint, res[12].Outcome)
	require.Equal(t, res[0].MessageID, res[12].MessageID)
	require.Equal(t, ingest.DuplicateFingerprint, res[13].Outcome)
	require.Equal(t, res[11].MessageID, res[13].MessageID)
	require.Equal(t, 12, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM blocked_copies`))
}

// A batch's messages are decided in order although their statements are
// sent together: a later copy of an earlier message is its duplicate, and a
// changed copy is kept for review.
func TestBatchDecidesInOrder(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	res := s.batch(t, `{"id": "A"}`, `{"id": "B"}`, `{"id": "A", "note": "changed"}`, `{"id": "A"}`)
	require.Equal(t, ingest.Created, res[0].Outcome)
	require.Equal(t, ingest.Created, res[1].Outcome)
	for _, dup := range res[2:] {
		require.Equal(t, ingest.DuplicateFingerprint, dup.Outcome)
		require.Equal(t, res[0].MessageID, dup.MessageID, "the first A holds the fingerprint")
	}
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM blocked_copies`), "only the changed copy is kept")
}

// A holder older than the window gives its fingerprint up to the batch's
// first copy, which the second copy of the same batch then repeats.
func TestBatchReclaimsAnExpiredFingerprint(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	old := s.batch(t, `{"id": "A"}`)[0]
	_, err := s.pool.Exec(context.Background(), `UPDATE messages SET received_at = now() - interval '25 hours' WHERE id = $1`, old.MessageID)
	require.NoError(t, err)

	res := s.batch(t, `{"id": "A", "n": 1}`, `{"id": "A", "n": 2}`)
	require.Equal(t, ingest.Created, res[0].Outcome, "the expired holder does not block")
	require.NotEqual(t, old.MessageID, res[0].MessageID)
	require.Equal(t, ingest.DuplicateFingerprint, res[1].Outcome)
	require.Equal(t, res[0].MessageID, res[1].MessageID, "the second copy repeats the first, not the expired holder")
	var oldFingerprint *[]byte
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT fingerprint FROM messages WHERE id = $1`, old.MessageID).Scan(&oldFingerprint))
	require.Nil(t, oldFingerprint, "the expired holder released its claim")
}

// A batch of one is decided as a single message is (the one-row statement,
// no claim lock): racing copies, in batches of one and as single messages,
// store the order once and block every other copy with its event, a
// changed copy is kept, and a holder past its window gives the claim up.
func TestBatchesOfOneDecideAsSingleMessages(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	const copies = 24
	results, errs := make([]ingest.Result, copies), make([]error, copies)
	var wg sync.WaitGroup
	for i := range copies {
		wg.Go(func() {
			if i%2 == 1 {
				results[i], errs[i] = s.in.Receive(context.Background(), s.req(`{"id": "A"}`))
				return
			}
			var batch ingest.BatchResult
			if batch, errs[i] = s.in.ReceiveBatch(context.Background(), ingest.Batch{Items: []ingest.Request{s.req(`{"id": "A"}`)}}); errs[i] == nil {
				results[i] = batch.Results[0]
			}
		})
	}
	wg.Wait()
	created := 0
	for i, r := range results {
		require.NoError(t, errs[i])
		if r.Outcome == ingest.Created {
			created++
		}
		require.Equal(t, results[0].MessageID, r.MessageID, "every copy names the one stored message")
	}
	require.Equal(t, 1, created)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, copies-1, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))

	changed := s.batch(t, `{"id": "A", "qty": 2}`)[0]
	require.Equal(t, ingest.DuplicateFingerprint, changed.Outcome)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM blocked_copies`), "the changed copy is kept")

	_, err := s.pool.Exec(context.Background(), `UPDATE messages SET received_at = now() - interval '25 hours'`)
	require.NoError(t, err)
	renewed := s.batch(t, `{"id": "A", "qty": 3}`)[0]
	require.Equal(t, ingest.Created, renewed.Outcome, "a holder past its window does not block")
	require.NotEqual(t, results[0].MessageID, renewed.MessageID)
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM messages WHERE fingerprint IS NOT NULL`))
}

// Many batches carrying the same orders in different orders at once store
// each order exactly once and block every other copy, without deadlocks.
func TestConcurrentBatchesStoreEachMessageOnce(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	const batches, orders = 16, 20
	s.concurrentBatches(t, batches, orders, 1)
	require.Equal(t, orders, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, orders, s.count(t, `SELECT count(DISTINCT fingerprint) FROM messages`))
	require.Equal(t, (batches-1)*orders, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
	var unblocked int
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_events e
		WHERE e.action = 'message.duplicate_blocked' AND NOT EXISTS (SELECT FROM messages m WHERE m.id = e.message_id)`).Scan(&unblocked))
	require.Zero(t, unblocked, "every blocked copy names a stored message")
}

// Batches too large to lock each claim (they lock their tenant
// environment instead) race with small ones that lock each claim, holding
// the same orders in different orders: each order is stored once, every
// other copy blocked, without deadlocks.
func TestConcurrentLargeAndSmallBatchesStoreEachMessageOnce(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	const large, small, orders, few = 4, 12, ingest.MaxClaimLocks + 22, 10
	var wg sync.WaitGroup
	errs := make(chan error, large+small)
	for i := range large + small {
		perm := rand.Perm(orders)
		if i >= large {
			perm = perm[:few]
		}
		wg.Go(func() {
			b := ingest.Batch{}
			for _, n := range perm {
				b.Items = append(b.Items, s.req(fmt.Sprintf(`{"id": "order-%d", "batch": %d}`, n, i)))
			}
			_, err := s.in.ReceiveBatch(context.Background(), b)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, orders, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, orders, s.count(t, `SELECT count(DISTINCT fingerprint) FROM messages`))
	require.Equal(t, large*orders+small*few-orders,
		s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
}

// A batch that mixes new messages, duplicates of stored ones and repeats
// of its own messages records each as one at a time would: three copies of
// one order block against the first, each event names the original and
// says how the copy differs from it, and only changed copies are kept, with
// their key values and the form they arrived in.
func TestBatchMixesNewStoredAndRepeatedMessages(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	stored := s.batch(t, `{"id": "S", "v": 1}`)[0]

	packet := func(req ingest.Request, position int) ingest.Request {
		req.Received = &ingest.Received{ContentType: "application/x-sap.idoc",
			Bytes: []byte(fmt.Sprintf("<IDOC n=%d/>", position)), Position: position, Of: 6}
		return req
	}
	items := []ingest.Request{
		s.req(`{"id": "N", "E1": {"x": 1}}`), // new
		s.req(`{"id": "S", "v": 1}`),         // identical to the stored S
		s.req(`{"id": "N", "E1": [{"x": 1}]}`),
		s.req(`{"id": "N", "E1": {"x": 2}}`),
		s.req(`{"id": "S", "v": 2}`), // S changed
		s.req(`{"id": "M"}`),
	}
	items[0].Docnum = "DOC-N"
	for i := range items {
		items[i] = packet(items[i], i+1)
		items[i].Source.Position = i + 1
	}
	res, err := s.in.ReceiveBatch(context.Background(), ingest.Batch{Items: items})
	require.NoError(t, err)
	outcomes := make([]ingest.Outcome, len(res.Results))
	for i, r := range res.Results {
		outcomes[i] = r.Outcome
	}
	require.Equal(t, []ingest.Outcome{ingest.Created, ingest.DuplicateFingerprint, ingest.DuplicateFingerprint,
		ingest.DuplicateFingerprint, ingest.DuplicateFingerprint, ingest.Created}, outcomes)
	n := res.Results[0].MessageID
	require.Equal(t, []int64{stored.MessageID, n, n, stored.MessageID},
		[]int64{res.Results[1].MessageID, res.Results[2].MessageID, res.Results[3].MessageID, res.Results[4].MessageID})

	rows, err := s.pool.Query(context.Background(), `SELECT e.message_id, e.details->'original'->>'docnum',
		e.details->>'content', (e.details->'source'->>'position')::int, b.packet_position, b.key_values
		FROM audit_events e LEFT JOIN blocked_copies b ON b.audit_event_id = e.id
		WHERE e.action = 'message.duplicate_blocked' ORDER BY e.id`)
	require.NoError(t, err)
	type event struct {
		original       int64
		originalDocnum *string
		content        string
		position       int
		keptAt         *int32
		keyValues      []string
	}
	var events []event
	for rows.Next() {
		var e event
		require.NoError(t, rows.Scan(&e.original, &e.originalDocnum, &e.content, &e.position, &e.keptAt, &e.keyValues))
		events = append(events, e)
	}
	require.NoError(t, rows.Err())
	docN := "DOC-N"
	four, five := int32(4), int32(5)
	require.Equal(t, []event{
		{original: stored.MessageID, content: "identical", position: 2},
		{original: n, originalDocnum: &docN, content: "shape_only", position: 3},
		{original: n, originalDocnum: &docN, content: "changed", position: 4, keptAt: &four, keyValues: []string{"N"}},
		{original: stored.MessageID, content: "changed", position: 5, keptAt: &five, keyValues: []string{"S"}},
	}, events)
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM message_key_values`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM messages WHERE packet_position = 1 AND received_bytes = '<IDOC n=1/>'`))
}

// Sixteen and more batches of the same orders in random orders, each
// carrying every order twice, store each order once and block every other
// copy; the copies of other batches differ from the stored one and are
// kept, once each with its two arrivals, the stored one's own repeat is not.
func TestConcurrentBatchesWithRepeatsStoreEachMessageOnce(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	const batches, orders = 24, 15
	s.concurrentBatches(t, batches, orders, 2)
	require.Equal(t, orders, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, orders, s.count(t, `SELECT count(DISTINCT fingerprint) FROM messages`))
	require.Equal(t, 2*batches*orders-orders, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
	// A batch's two copies of an order are the same changed copy: one item
	// to review, arrived twice.
	require.Equal(t, (batches-1)*orders, s.count(t, `SELECT count(*) FROM blocked_copies WHERE copies = 2`))
	require.Equal(t, (batches-1)*orders, s.count(t, `SELECT count(*) FROM blocked_copies`))
	require.Equal(t, orders, s.count(t, `SELECT count(*) FROM audit_events WHERE details->>'content' = 'identical'`))
	require.Zero(t, s.count(t, `SELECT count(*) FROM blocked_copies b JOIN messages m ON m.id = b.original_message_id
		WHERE b.content_hash = m.content_hash`), "no identical copy is kept")
}

// A batch decides every message as the same messages sent one at a time
// decide them: on random streams of repeats (identical, differing only in
// shape, changed), of messages already stored and of one whose holder is
// past its window, large enough to need several statements, the outcomes and
// every row written (messages, their keys, audit events, blocked copies)
// are the same, up to ids and the message type's id in fingerprints.
func TestBatchAgreesWithOneAtATime(t *testing.T) {
	t.Parallel()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))
	filler := strings.Repeat("f", 300<<10)
	for round := range 4 {
		batch, single := newBatchSite(t), newBatchSite(t)
		var items []ingest.Request
		var singles []ingest.Request
		n := 20 + rnd.IntN(40)
		for i := range n {
			id := string(rune('A' + rnd.IntN(6)))
			var payload string
			switch rnd.IntN(4) {
			case 0:
				payload = fmt.Sprintf(`{"id": %q, "E1": {"x": 1}}`, id)
			case 1:
				payload = fmt.Sprintf(`{"id": %q, "E1": [{"x": 1}]}`, id)
			case 2:
				payload = fmt.Sprintf(`{"id": %q, "v": %d}`, id, rnd.IntN(3))
			default:
				payload = fmt.Sprintf(`{"id": %q}`, id)
			}
			if rnd.IntN(12) == 0 {
				payload = fmt.Sprintf(`{"id": %q, "filler": %q}`, id, filler)
			}
			docnum := []string{"", "D1", "D2"}[rnd.IntN(3)]
			var received *ingest.Received
			if rnd.IntN(2) == 0 {
				received = &ingest.Received{ContentType: "application/x-sap.idoc", Bytes: []byte(fmt.Sprintf("<IDOC %d/>", i)),
					Position: i + 1, Of: n}
			}
			for _, s := range []*batchSite{batch, single} {
				req := s.req(payload)
				req.Docnum, req.Received = docnum, received
				req.Source.RequestID, req.Source.Position = fmt.Sprintf("round-%d", round), i+1
				req.Source.Headers = map[string]string{"User-Agent": "agreement"}
				if s == batch {
					items = append(items, req)
				} else {
					singles = append(singles, req)
				}
			}
		}
		// Stored before the stream: A, B and C, A's past its window.
		labels := map[*batchSite]map[int64]string{}
		for _, s := range []*batchSite{batch, single} {
			labels[s] = map[int64]string{}
			for i, r := range s.batch(t, `{"id": "A"}`, `{"id": "B", "v": 1}`, `{"id": "C", "E1": [{"x": 1}]}`) {
				labels[s][r.MessageID] = fmt.Sprintf("stored before %d", i)
			}
			_, err := s.pool.Exec(context.Background(), `UPDATE messages SET received_at = now() - interval '25 hours'
				WHERE payload->>'id' = 'A'`)
			require.NoError(t, err)
		}

		res, err := batch.in.ReceiveBatch(context.Background(), ingest.Batch{Items: items})
		require.NoError(t, err)
		one := make([]ingest.Result, len(singles))
		for i, req := range singles {
			one[i], err = single.in.Receive(context.Background(), req)
			require.NoError(t, err)
		}
		for i := range one {
			for s, r := range map[*batchSite]ingest.Result{batch: res.Results[i], single: one[i]} {
				if r.Outcome == ingest.Created {
					labels[s][r.MessageID] = fmt.Sprintf("message %d", i+1)
				}
			}
		}
		for i := range one {
			require.Equal(t, one[i].Outcome, res.Results[i].Outcome, "round %d, message %d", round, i+1)
			require.Equal(t, labels[single][one[i].MessageID], labels[batch][res.Results[i].MessageID],
				"round %d, message %d", round, i+1)
		}
		require.Equal(t, single.dump(t, labels[single]), batch.dump(t, labels[batch]), "round %d", round)
	}
}

// dump lists every row ingest wrote, sorted, with message ids replaced by
// their labels (the message of the stream that created each), fingerprints
// by the key values of their messages, and events by the position of the
// message they block, so that two databases compare. Ids themselves are
// not compared: a batch decides a message whose holder is past its window
// alone, after the rest (as it did when each message was a statement of its
// own, sent in one pipeline), so that message and its event get later ids
// than one at a time gives them.
func (s *batchSite) dump(t *testing.T, ids map[int64]string) []string {
	t.Helper()
	ctx := context.Background()
	fingerprints := map[string]string{}
	var out []string
	rows, err := s.pool.Query(ctx, `SELECT m.id, m.computed_fingerprint, keys.values,
		format('%s|%s|%s|%s|%s|%s|%s|%s|%s|%s', coalesce(m.docnum, '-'), md5(m.payload::text), encode(m.content_hash, 'hex'),
		       coalesce(encode(m.shape_hash, 'hex'), '-'), m.fingerprint IS NOT NULL, m.content_type,
		       coalesce(encode(m.received_bytes, 'escape'), '-'), coalesce(m.packet_position, 0), coalesce(m.packet_size, 0),
		       m.source_endpoint || ' ' || m.remote_addr)
		FROM messages m
		CROSS JOIN LATERAL (SELECT coalesce(array_agg(k.value ORDER BY k.value)::text, '-') AS values
		                    FROM message_key_values k WHERE k.tenant_id = m.tenant_id AND k.message_id = m.id) keys
		ORDER BY m.id`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		var fp, keys, row string
		require.NoError(t, rows.Scan(&id, &fp, &keys, &row))
		require.Contains(t, ids, id, "every message was created by a known request")
		fingerprints[fp] = "fingerprint of " + keys
		out = append(out, fmt.Sprintf("%s: %s keys %s %s", ids[id], fingerprints[fp], keys, row))
	}
	require.NoError(t, rows.Err())
	events := map[int64]string{}
	rows, err = s.pool.Query(ctx, `SELECT id, message_id, match_key, action || ' ' || actor, details FROM audit_events ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		var message *int64
		var key *string
		var what string
		var details map[string]any
		require.NoError(t, rows.Scan(&id, &message, &key, &what, &details))
		events[id] = fmt.Sprintf("e%d", len(events)+1)
		if source, ok := details["source"].(map[string]any); ok && source["position"] != nil {
			events[id] = fmt.Sprintf("event of message %v", source["position"])
		}
		if fp, ok := details["fingerprint"].(string); ok {
			details["fingerprint"] = fingerprints[fp]
		}
		if original, ok := details["original"].(map[string]any); ok {
			original["id"] = ids[int64(original["id"].(float64))]
		}
		var messageRank, keyRank string
		if message != nil {
			messageRank = ids[*message]
		}
		if key != nil {
			keyRank = fingerprints[*key]
		}
		out = append(out, fmt.Sprintf("event %s %s %s %s %v", events[id], messageRank, keyRank, what, details))
	}
	require.NoError(t, rows.Err())
	rows, err = s.pool.Query(ctx, `SELECT audit_event_id, original_message_id,
		format('%s|%s|%s|%s|%s|%s|%s|%s|%s', coalesce(docnum, '-'), md5(payload::text), encode(content_hash, 'hex'), sender,
		       content_type, coalesce(encode(received_bytes, 'escape'), '-'), coalesce(packet_position, 0),
		       coalesce(packet_size, 0), key_values)
		FROM blocked_copies ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var event, original int64
		var row string
		require.NoError(t, rows.Scan(&event, &original, &row))
		out = append(out, fmt.Sprintf("copy %s %s %s", events[event], ids[original], row))
	}
	require.NoError(t, rows.Err())
	slices.Sort(out)
	return out
}

// concurrentBatches sends batches batches at once, each carrying orders
// orders copies times over, in an order of its own; a copy's payload names
// its batch, so copies of different batches differ.
func (s *batchSite) concurrentBatches(t *testing.T, batches, orders, copies int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, batches)
	for i := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := ingest.Batch{}
			for _, n := range rand.Perm(copies * orders) {
				b.Items = append(b.Items, s.req(fmt.Sprintf(`{"id": "order-%d", "batch": %d}`, n%orders, i)))
			}
			_, err := s.in.ReceiveBatch(context.Background(), b)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
