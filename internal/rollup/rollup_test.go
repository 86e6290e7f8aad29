package rollup_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/rollup"
	"github.com/lefia/edihub/internal/testfactory"
)

// site is a database with two tenants of one message type each.
type site struct {
	pool  *pgxpool.Pool
	types []db.MessageType
	envs  map[int64]int64 // tenant id → environment id
}

func setup(t *testing.T) *site {
	t.Helper()
	pool := pgtest.Pool(t)
	s := &site{pool: pool, envs: map[int64]int64{}}
	for _, slug := range []string{"acme", "globex"} {
		tn, env := testfactory.TenantWithEnvironment(t, pool, slug)
		s.envs[tn.ID] = env.ID
		s.types = append(s.types, testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Tenant: slug, Code: "ORDERS05"}))
	}
	return s
}

// insertMessages stores n messages of mt received at the time SQL
// expression at says; blocked records, beside each, a blocked duplicate
// with the given splits.
const insertMessages = `
INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint, received_at)
SELECT $1, $2, $3, '{}', decode(repeat('00', 32), 'hex'), 'receive-message', %[1]s FROM generate_series(1, $4) g`

const insertBlocked = `
INSERT INTO audit_events (tenant_id, environment_id, message_type_id, action, actor, details, created_at)
SELECT $1, $2, $3, 'message.duplicate_blocked', 'test', jsonb_build_object('mode', $5::text, 'content', $6::text), %[1]s
FROM generate_series(1, $4) g`

// requireTotalsMatchRows compares, per tenant, type and UTC hour, the rolled-up counts
// with a count of the rows themselves.
func requireTotalsMatchRows(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	for _, check := range []struct{ what, rolled, counted string }{
		{"messages",
			`SELECT tenant_id, message_type_id, hour, messages::text FROM traffic_messages_hourly`,
			`SELECT tenant_id, message_type_id, date_trunc('hour', received_at, 'UTC'), count(*)::text FROM messages GROUP BY 1, 2, 3`},
		{"blocked duplicates, by mode and content",
			`SELECT tenant_id, message_type_id, hour, concat_ws('/', blocked, fingerprint, idempotency_key, identical, shape_only, changed)
			 FROM traffic_blocked_hourly`,
			`SELECT tenant_id, message_type_id, date_trunc('hour', created_at, 'UTC'),
			        concat_ws('/', count(*), count(*) FILTER (WHERE details->>'mode' = 'fingerprint'),
			                  count(*) FILTER (WHERE details->>'mode' = 'idempotency_key'),
			                  count(*) FILTER (WHERE details->>'content' = 'identical'),
			                  count(*) FILTER (WHERE details->>'content' = 'shape_only'),
			                  count(*) FILTER (WHERE details->>'content' = 'changed'))
			 FROM audit_events WHERE action = 'message.duplicate_blocked' GROUP BY 1, 2, 3`},
	} {
		rolled, counted := rowsOf(t, pool, check.rolled), rowsOf(t, pool, check.counted)
		if check.what == "messages" {
			require.NotEmpty(t, counted, "every test stores messages")
		}
		require.Equal(t, counted, rolled, "%s per tenant, type and hour", check.what)
	}
}

func rowsOf(t *testing.T, pool *pgxpool.Pool, query string) map[string]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), query)
	require.NoError(t, err)
	out := map[string]string{}
	for rows.Next() {
		var tenant, mt int64
		var hour time.Time
		var counts string
		require.NoError(t, rows.Scan(&tenant, &mt, &hour, &counts))
		out[fmt.Sprintf("%d/%d/%s", tenant, mt, hour.UTC().Format(time.RFC3339))] = counts
	}
	require.NoError(t, rows.Err())
	return out
}

func watermark(t *testing.T, pool *pgxpool.Pool) time.Time {
	t.Helper()
	var at time.Time
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT rolled_up_to FROM traffic_rollup_state`).Scan(&at))
	return at
}

// A backlog of three weeks is rolled up a Span at a time, every row into
// its hour and split, and a second catch-up adds nothing.
func TestCatchUpCountsEveryRowOnce(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	for i, mt := range s.types {
		env := s.envs[mt.TenantID]
		at := "now() - (g % 500) * interval '1 hour' - (g % 60) * interval '1 minute'"
		_, err := s.pool.Exec(ctx, fmt.Sprintf(insertMessages, at), mt.TenantID, env, mt.ID, 2000+i)
		require.NoError(t, err)
		for _, split := range [][2]string{{"fingerprint", "identical"}, {"fingerprint", "changed"}, {"idempotency_key", "shape_only"}} {
			_, err := s.pool.Exec(ctx, fmt.Sprintf(insertBlocked, at), mt.TenantID, env, mt.ID, 300+i, split[0], split[1])
			require.NoError(t, err)
		}
	}
	// An event outside any duplicate is not traffic.
	_, err := s.pool.Exec(ctx, `INSERT INTO audit_events (action, actor, details) VALUES ('user.login_failed', 'anonymous', '{}')`)
	require.NoError(t, err)

	r := rollup.New(s.pool, slog.Default(), 0)
	steps := 0
	for more := true; more; steps++ {
		more, err = r.Step(ctx)
		require.NoError(t, err)
	}
	require.GreaterOrEqual(t, steps, 21, "500 hours back, a day per step")
	requireTotalsMatchRows(t, s.pool)
	require.WithinDuration(t, time.Now(), watermark(t, s.pool), 5*time.Second)

	require.NoError(t, r.CatchUp(ctx))
	requireTotalsMatchRows(t, s.pool)
}

// Rows commit while steps run, some of them long after the time they are
// stamped with: ingest's transactions (received_at and created_at are the
// transaction's start) that last longer than the lag, and released blocked
// copies stamped an hour or two back (CountLate). However the commits and
// the steps interleave, the totals end equal to a count of the rows.
func TestStepsWhileRowsCommitMissNoneAndCountNoneTwice(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(s.pool.Config().ConnString())
	require.NoError(t, err)
	cfg.MaxConns = 12
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	// The lag is far shorter than the transactions, so only the oldest
	// open transaction keeps the watermark below what is still to commit.
	r := rollup.New(pool, slog.Default(), 10*time.Millisecond)
	stop := make(chan struct{})
	var steps, late atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := r.Step(ctx); err != nil {
				errs <- err
				return
			}
			steps.Add(1)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mt := s.types[w%len(s.types)]
			env := s.envs[mt.TenantID]
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				err := db.WithPgxTx(ctx, pool, func(tx pgx.Tx) error {
					if w%4 == 3 {
						// A released copy: stamped in the past, counted
						// by whoever is due.
						var id int64
						if err := tx.QueryRow(ctx, `
							INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint, received_at)
							VALUES ($1, $2, $3, '{}', decode(repeat('00', 32), 'hex'), 'receive-message',
							        now() - random() * interval '2 hours')
							RETURNING id`, mt.TenantID, env, mt.ID).Scan(&id); err != nil {
							return err
						}
						late.Add(1)
						return rollup.CountLate(ctx, db.On(tx), mt.TenantID, id)
					}
					if _, err := tx.Exec(ctx, fmt.Sprintf(insertMessages, "now()"), mt.TenantID, env, mt.ID, 1); err != nil {
						return err
					}
					if _, err := tx.Exec(ctx, `SELECT pg_sleep(random() * 0.15)`); err != nil {
						return err
					}
					mode := []string{"fingerprint", "idempotency_key"}[i%2]
					_, err := tx.Exec(ctx, fmt.Sprintf(insertBlocked, "now()"), mt.TenantID, env, mt.ID, 1, mode, "identical")
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Greater(t, steps.Load(), int64(50))
	require.Greater(t, late.Load(), int64(10))

	require.NoError(t, r.CatchUp(ctx))
	requireTotalsMatchRows(t, s.pool)
}

// A late message below the watermark is counted by CountLate, one at or
// above it by the next step, never by both.
func TestCountLateCountsWhatNoStepWill(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	mt := s.types[0]
	env := s.envs[mt.TenantID]
	r := rollup.New(s.pool, slog.Default(), 0)
	_, err := s.pool.Exec(ctx, fmt.Sprintf(insertMessages, "now() - interval '3 hours'"), mt.TenantID, env, mt.ID, 2)
	require.NoError(t, err)
	require.NoError(t, r.CatchUp(ctx))

	for _, at := range []string{"now() - interval '5 hours'", "now() - interval '90 minutes'", "now()"} {
		require.NoError(t, db.WithPgxTx(ctx, s.pool, func(tx pgx.Tx) error {
			var id int64
			if err := tx.QueryRow(ctx, fmt.Sprintf(insertMessages, at)+" RETURNING id", mt.TenantID, env, mt.ID, 1).Scan(&id); err != nil {
				return err
			}
			return rollup.CountLate(ctx, db.On(tx), mt.TenantID, id)
		}))
	}
	require.Equal(t, 4, pgtest.Count(t, s.pool, `SELECT sum(messages)::int FROM traffic_messages_hourly`),
		"the two rolled up and the two stamped below the watermark; the last waits for a step")
	require.NoError(t, r.CatchUp(ctx))
	requireTotalsMatchRows(t, s.pool)
}

// A step reads the range since the watermark through a time index, never a
// whole table, also as the generic plan a prepared statement may switch to
// (with autovacuum off, statistics may never be fresh).
func TestStepReadsTimeIndexRanges(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	for _, mt := range s.types {
		at := "now() - (g % 8760) * interval '1 hour'"
		_, err := s.pool.Exec(ctx, fmt.Sprintf(insertMessages, at), mt.TenantID, s.envs[mt.TenantID], mt.ID, 20000)
		require.NoError(t, err)
		_, err = s.pool.Exec(ctx, fmt.Sprintf(insertBlocked, at), mt.TenantID, s.envs[mt.TenantID], mt.ID, 10000, "fingerprint", "identical")
		require.NoError(t, err)
	}
	for marker, table := range map[string]string{
		"INSERT INTO traffic_messages_hourly": "messages",
		"INSERT INTO traffic_blocked_hourly":  "audit_events",
	} {
		pool, rec := pgtest.TracedPool(t, s.pool.Config().ConnString(), marker)
		_, err := rollup.New(pool, slog.Default(), 0).Step(ctx)
		require.NoError(t, err)
		scans, raw := rec.ExplainGeneric(t, pool)
		require.NotContains(t, scans, "Seq Scan on "+table, "%s", raw)
		require.True(t, slices.ContainsFunc(scans, func(s string) bool { return strings.HasPrefix(s, table+"_") }),
			"reads %s through one of its indexes: %s", table, raw)
	}
}

// Every round's outcome is recorded with the rounds that failed in a row,
// which a round that succeeds sets back to none (housekeeping.failing).
func TestRoundRecordsFailuresInARow(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	mt := s.types[0]
	_, err := s.pool.Exec(ctx, fmt.Sprintf(insertMessages, "now() - interval '2 hours'"), mt.TenantID, s.envs[mt.TenantID], mt.ID, 1)
	require.NoError(t, err)
	// The hours' table is gone: every step fails.
	_, err = s.pool.Exec(ctx, `ALTER TABLE traffic_messages_hourly RENAME TO traffic_messages_hourly_away`)
	require.NoError(t, err)
	r := rollup.New(s.pool, slog.New(slog.DiscardHandler), 0)
	var failures int
	r.OnRound = func(err error) {
		if err != nil {
			failures++
		}
	}
	failedRounds := func() (n int, lastError string) {
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT failed_rounds, last_error FROM traffic_rollup_state`).Scan(&n, &lastError))
		return n, lastError
	}
	for range 3 {
		r.Round(ctx)
	}
	n, lastError := failedRounds()
	require.Equal(t, 3, n)
	require.Contains(t, lastError, "traffic_messages_hourly")
	require.Equal(t, 3, failures)

	_, err = s.pool.Exec(ctx, `ALTER TABLE traffic_messages_hourly_away RENAME TO traffic_messages_hourly`)
	require.NoError(t, err)
	r.Round(ctx)
	n, lastError = failedRounds()
	require.Zero(t, n)
	require.Empty(t, lastError)
}
