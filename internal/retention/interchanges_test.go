package retention_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/partner"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/retention"
	"github.com/lefia/edihub/internal/testfactory"
)

// Interchanges past INTERCHANGE_WINDOW go, in batches, with their answers
// and acknowledgments; those within it stay, and so do the partners'
// numbers and gaps.
func TestSweepDeletesInterchangesPastTheirWindow(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	_, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	_, err := pool.Exec(ctx, `
		INSERT INTO interchanges (tenant_id, environment_id, standard, sender, receiver, control_number, content_hash,
		                          response_body, acknowledgment, received_at)
		SELECT $1, $2, 'x12', 'ZZ:ACMEBUYER', 'ZZ:EDIHUBSELLER', lpad(i::text, 9, '0'), sha256(i::text::bytea),
		       '{"messages": []}', 'ISA*…', now() - CASE WHEN i <= 1234 THEN interval '721 hours' ELSE interval '719 hours' END
		FROM generate_series(1, 1284) i`, env.TenantID, env.ID)
	require.NoError(t, err)
	require.NoError(t, db.WithTx(ctx, pool, func(q *db.Queries) error {
		pair := partner.Pair{TenantID: env.TenantID, EnvironmentID: env.ID, Standard: "x12", Sender: "ZZ:ACMEBUYER", Receiver: "ZZ:EDIHUBSELLER"}
		if err := partner.Record(ctx, q, pair, "000000001"); err != nil {
			return err
		}
		return partner.Record(ctx, q, pair, "000000003")
	}))

	sweeper := retention.NewSweeper(pool, slog.New(slog.NewTextHandler(io.Discard, nil)), 500, time.Minute,
		retention.Policy{InterchangeWindow: 720 * time.Hour})
	removed, err := sweeper.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1234), removed[retention.Interchanges])
	require.Equal(t, 50, pgtest.Count(t, pool, `SELECT count(*) FROM interchanges`))
	require.Equal(t, 0, pgtest.Count(t, pool, `SELECT count(*) FROM interchanges WHERE received_at <= now() - interval '720 hours'`))
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM interchange_partners`))
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM interchange_gaps`))
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM retention_sweeps WHERE kind = 'interchanges' AND removed = 1234`))

	removed, err = sweeper.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, removed[retention.Interchanges], "nothing more until the others pass the window")
}
