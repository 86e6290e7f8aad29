package db

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
)

// Every statement of a retention sweep batch reads every table through an
// index, in the generic plan a pooled connection keeps, made here on empty
// tables without statistics: the worst case, which RetentionSweepPlanByIndex
// exists for. A sequential scan of a table that grows would run once per
// batch.
func TestSweepStatementsReadThroughIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := genericConn(t, pgtest.URL(t))
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, retentionSweepPlanByIndex)
	require.NoError(t, err)
	for name, sql := range map[string]string{
		"MessageExpireLock":            messageExpireLock,
		"MessageExpireDeliveries":      messageExpireDeliveries,
		"MessageExpireDelete":          messageExpireDelete,
		"BlockedCopyDeleteExpired":     blockedCopyDeleteExpired,
		"DeliveryAttemptDeleteExpired": deliveryAttemptDeleteExpired,
		"IdempotencyKeyDeleteExpired":  idempotencyKeyDeleteExpired,
		"InterchangeDeleteExpired":     interchangeDeleteExpired,
	} {
		desc, err := tx.Prepare(ctx, name, sql)
		require.NoError(t, err, name)
		args := strings.TrimSuffix(strings.Repeat("NULL, ", len(desc.ParamOIDs)), ", ")
		var raw []byte
		require.NoError(t, tx.QueryRow(ctx, fmt.Sprintf("EXPLAIN (FORMAT JSON) EXECUTE %q(%s)", name, args)).Scan(&raw), name)
		for _, s := range pgtest.Scans(t, raw) {
			require.NotEmpty(t, s.Index, "%s reads %s without an index:\n%s", name, s.Relation, raw)
		}
	}
}
