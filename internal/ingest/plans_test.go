package ingest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/ingest"
)

// Every path that stores a message runs its statements on their generic
// plans (db.PipelinedBegin): a single message, one with an Idempotency-Key
// and a batch; so do a retransmission and a replay, which store an audit
// event in a transaction of its own (db.OwnTransactions). A trigger on
// messages and audit_events records the plan cache mode each insert ran
// under.
func TestStoresRunOnGenericPlans(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	ctx := context.Background()
	_, err := s.pool.Exec(ctx, `
		CREATE TABLE plan_modes (mode text NOT NULL);
		CREATE FUNCTION record_plan_mode() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO plan_modes VALUES (current_setting('plan_cache_mode'));
			RETURN NULL;
		END $$;
		CREATE TRIGGER record_plan_mode AFTER INSERT ON messages FOR EACH ROW EXECUTE FUNCTION record_plan_mode();
		CREATE TRIGGER record_plan_mode AFTER INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION record_plan_mode();`)
	require.NoError(t, err)

	_, err = s.in.Receive(ctx, s.req(`{"id": "single"}`))
	require.NoError(t, err)
	keyed := s.req(`{"id": "keyed"}`)
	keyed.IdempotencyKey = "key-1"
	_, err = s.in.Receive(ctx, keyed)
	require.NoError(t, err)
	s.batch(t, `{"id": "first of a batch"}`, `{"id": "second of a batch"}`)
	require.Equal(t, 4, s.count(t, `SELECT count(*) FROM messages`))

	// A retransmission and a replay write an audit event each, by
	// statements that run in transactions of their own.
	res, err := s.in.Receive(ctx, s.req(`{"id": "single"}`))
	require.NoError(t, err)
	require.Equal(t, ingest.DuplicateFingerprint, res.Outcome)
	res, err = s.in.Receive(ctx, keyed)
	require.NoError(t, err)
	require.Equal(t, ingest.ReplayedKey, res.Outcome)

	require.Equal(t, 6, s.count(t, `SELECT count(*) FROM plan_modes WHERE mode = 'force_generic_plan'`))
	require.Equal(t, 6, s.count(t, `SELECT count(*) FROM plan_modes`))
	require.Equal(t, 4, s.count(t, `SELECT count(*) FROM messages`))
}
