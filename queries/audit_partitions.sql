-- The partitions of audit_events, one a month (migration 015), kept by
-- internal/auditpartition.

-- AuditPartitionLock makes one server at a time keep the partitions, for as
-- long as its connection holds the lock; the others skip their turn.
-- name: AuditPartitionLock :one
SELECT pg_try_advisory_lock(hashtextextended('edihub audit_events partitions', 0))::boolean AS locked;

-- AuditPartitionList lists the partitions, oldest first, each with the end
-- of its range (its events were created before it) and whether a
-- concurrent detach of it was cut short and waits to be finished.
-- name: AuditPartitionList :many
SELECT c.relname::text AS name,
       (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz AS upper_bound,
       i.inhdetachpending::boolean AS detach_pending
FROM pg_catalog.pg_inherits i
JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'audit_events'::regclass
ORDER BY upper_bound;

-- AuditPartitionAdd adds the month from lower on (see
-- audit_events_add_partition) and returns the new partition's name.
-- name: AuditPartitionAdd :one
SELECT audit_events_add_partition(@lower::timestamptz)::text AS name;

-- AuditPartitionUnlock lets the next server take its turn at once, rather
-- than when this connection's end has been noticed.
-- name: AuditPartitionUnlock :exec
SELECT pg_advisory_unlock(hashtextextended('edihub audit_events partitions', 0));
