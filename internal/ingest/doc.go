// Package ingest decides, for each received message, whether it is new or a
// duplicate, and stores it exactly once. Deduplication is either by the
// client's Idempotency-Key or by the message type's fingerprint; in both
// modes a database unique index, not application code, settles races, and
// the decision, the message and its audit event commit in one transaction.
//
// # Group commit
//
// Single messages decided by their fingerprint, and the replays of single
// messages' Idempotency-Keys, that arrive while a transaction of their kind
// is committing wait for it and then share the next one. A request costs PostgreSQL about as much for its BEGIN, COMMIT
// (and the WAL flush behind it) and round trips as for its own statement;
// a group of twenty pays those once, the way a batch does. Each kind
// (replays, retransmissions, messages to store) has its own committer and
// groups (committers).
//
// A member with an Idempotency-Key (receive-message, an IDoc of its own,
// a webhook whose delivery id is its key) only has its key replayed in its
// group: all of them by one statement (IdempotencyKeyReplayAll), which
// answers and records each as the statement a lone replay runs
// (IdempotencyKeyReplay) would. A replay is answered after the COMMIT,
// and a key used for other content is refused then. A member whose key is
// not taken leaves the group with nothing done and claims its key alone,
// on the path of a request without group commit (storeWithKey, with its
// retries), outside the lane: claiming a key may wait for a concurrent
// first use of it, which a group must not wait for. A group of replays
// stores nothing, and is that statement alone, a transaction of its own
// in one round trip (db.OwnTransactions). So is a group of
// retransmissions, when their statement blocks every one of them
// (receiveAllByFingerprintTx).
//
// What stays as it was, and why:
//   - A 2xx still means committed: a member is answered only after the
//     group's COMMIT has returned.
//   - A failure is nobody else's: when the shared transaction fails for any
//     reason (a statement, a foreign key, the commit), no member is given
//     that error; each one is decided again alone, on the path a single
//     request took before group commit (a keyed one: receiveWithKey, replay
//     and claim), so that a bad member fails by itself and the others are
//     stored. The failed group's audit events roll back with it, so a
//     replay decided again is recorded once. Deciding a member again after
//     a commit whose outcome is unknown (the connection lost during it)
//     stores nothing twice: a message with a fingerprint finds its stored
//     copy and is answered as a duplicate, and a replay stores nothing. A
//     replay's audit event may then be written twice, as it may be when a
//     lone replay's connection is lost after its statement committed and
//     the client retries.
//   - The group's transaction runs on a context of its own, so that a
//     member whose client left cannot cancel the others' messages; it
//     lasts as long as the member who waits longest (groupTimeout when one
//     has no deadline). A member who left before its group started is
//     dropped from it.
//   - Members are decided with the decisions one after the other would
//     make: those with a fingerprint in arrival order by
//     receiveAllByFingerprint, so two copies in one group are one stored
//     message and one blocked duplicate with its audit event, and each
//     replay as the statement it runs alone would, writing the audit event
//     a lone replay writes. Every member's statement carries its own tenant and
//     environment. A copy that goes to the retransmissions' committer
//     while its original is being stored by a group of the other is
//     decided as any two concurrent requests are: by the unique index.
//   - Groups running side by side take their claims' advisory locks in one
//     sorted order first (claimLocks, as batches do), so they wait for each
//     other rather than deadlock. A replay claims nothing, and takes none.
package ingest
