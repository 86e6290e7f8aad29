-- Replication (internal/replication): what the primary that edihub writes
-- to says of its standbys. The functions stand for the views
-- pg_replication_slots and pg_stat_replication, which sqlc does not know.

-- ReplicationState reads whether the primary has standbys to wait for
-- (synchronous_standby_names is set, or a standby keeps a physical
-- replication slot on it) and how many confirm commits now.
-- name: ReplicationState :one
SELECT (current_setting('synchronous_standby_names') <> ''
		OR EXISTS (SELECT FROM pg_get_replication_slots() s WHERE s.slot_type = 'physical'))::bool AS configured,
	(SELECT count(*) FROM pg_stat_get_wal_senders() w WHERE w.sync_state IN ('sync', 'quorum'))::int AS synchronous;
