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

-- StandbyPosition says whether the server read is a standby, how far its
-- replay is behind (zero when it has replayed all it received; else the
-- time since the last commit it replayed) and the position replayed.
-- name: StandbyPosition :one
SELECT pg_is_in_recovery() AS standby,
	COALESCE(CASE WHEN pg_last_wal_receive_lsn() IS DISTINCT FROM pg_last_wal_replay_lsn()
		THEN extract(epoch FROM now() - pg_last_xact_replay_timestamp()) END, 0)::float8 AS lag_seconds,
	COALESCE(pg_last_wal_replay_lsn() - '0/0'::pg_lsn, 0)::bigint AS replayed;

-- WALWritten is the position of the primary's WAL written so far: every
-- transaction committed before it is at or below it.
-- name: WALWritten :one
SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint AS written;

-- CommitConfirmed runs right after a COMMIT, on the same connection and in
-- the same round trip (db.PipelinedBegin and db.OwnTransactions with
-- Confirm), and is true when that commit is on two machines. A COMMIT on
-- a primary with a synchronous standby returns once the standby has the
-- commit, unless the wait was given up: pg_auto_failover empties
-- synchronous_standby_names as the primary goes on alone (wait_primary),
-- which releases every commit waiting then, and a commit made afterwards
-- waits for nobody. Either way no standby confirms commits right after it,
-- which is what this reads. A server with no standby to wait for (no
-- synchronous_standby_names, no physical replication slot) is a single
-- server by design, and confirms.
-- name: CommitConfirmed :one
SELECT (EXISTS (SELECT FROM pg_stat_get_wal_senders() w WHERE w.sync_state IN ('sync', 'quorum'))
		OR current_setting('synchronous_standby_names') = ''
			AND NOT EXISTS (SELECT FROM pg_get_replication_slots() s WHERE s.slot_type = 'physical'))::bool AS confirmed;
