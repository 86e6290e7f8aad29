-- RetentionSweepPlanByIndex makes the rest of a sweep batch's transaction
-- read every table through an index. A batch deletes what hangs on a
-- thousand ids; without statistics (autovacuum off, or a table that grew
-- since it was last analysed) the planner cannot tell that those ids meet
-- a few rows, and may join them by hashing a whole table, for every batch,
-- in the plan a pooled connection then keeps. Every lookup of the sweep has
-- its index (migration 018), so nothing is lost by ruling the rest out.
-- name: RetentionSweepPlanByIndex :exec
SELECT set_config('enable_seqscan', 'off', true),
       set_config('enable_hashjoin', 'off', true),
       set_config('enable_mergejoin', 'off', true);

-- RetentionSweepRecord keeps the outcome of a sweep step for the admin,
-- replacing the previous one of its kind.
-- name: RetentionSweepRecord :exec
INSERT INTO retention_sweeps (kind, finished_at, removed, error)
VALUES (@kind, now(), @removed, left(@error::text, 500))
ON CONFLICT (kind) DO UPDATE SET finished_at = excluded.finished_at, removed = excluded.removed, error = excluded.error;

-- name: RetentionSweepList :many
SELECT kind, finished_at, removed, error FROM retention_sweeps ORDER BY kind;
