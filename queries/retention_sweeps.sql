-- RetentionSweepRecord keeps the outcome of a sweep step for the admin,
-- replacing the previous one of its kind.
-- name: RetentionSweepRecord :exec
INSERT INTO retention_sweeps (kind, finished_at, removed, error)
VALUES (@kind, now(), @removed, left(@error::text, 500))
ON CONFLICT (kind) DO UPDATE SET finished_at = excluded.finished_at, removed = excluded.removed, error = excluded.error;

-- name: RetentionSweepList :many
SELECT kind, finished_at, removed, error FROM retention_sweeps ORDER BY kind;
