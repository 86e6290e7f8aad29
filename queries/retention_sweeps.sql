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
-- replacing the previous one of its kind, and counts the rounds that
-- failed in a row for the rule housekeeping.failing.
-- name: RetentionSweepRecord :exec
INSERT INTO retention_sweeps (kind, finished_at, removed, error, failed_rounds)
VALUES (@kind, now(), @removed, left(@error::text, 500), CASE WHEN @error::text = '' THEN 0 ELSE 1 END)
ON CONFLICT (kind) DO UPDATE SET finished_at = excluded.finished_at, removed = excluded.removed, error = excluded.error,
    failed_rounds = CASE WHEN excluded.error = '' THEN 0 ELSE retention_sweeps.failed_rounds + 1 END;

-- RetentionSweepListFailing lists the kinds whose sweeps failed at least
-- min_rounds rounds in a row.
-- name: RetentionSweepListFailing :many
SELECT kind, finished_at, failed_rounds, error FROM retention_sweeps WHERE failed_rounds >= @min_rounds ORDER BY kind;

-- name: RetentionSweepList :many
SELECT kind, finished_at, removed, error FROM retention_sweeps ORDER BY kind;
