// Package db is edihub's access to PostgreSQL: the queries sqlc generates
// from queries/*.sql (Queries, in the *.sql.go files), the rows and errors
// they return, and the ways a statement is sent. Every query goes through
// On, which turns a read of one row that finds none into ErrNotFound.
//
// The ways to send statements, from the plainest:
//
//   - On(pool): one statement per call, each its own transaction, as a
//     named prepared statement cached per connection. For reads and for
//     single statements that decide everything they write.
//   - WithTx, WithPgxTx: statements that must commit together, one round
//     trip each, between BEGIN and COMMIT.
//   - Batch and One (batch.go): several calls in one round trip, on
//     whatever On was given: a pool, a connection or a transaction. Each
//     statement still runs as it would alone, after the one before.
//   - OwnTransactions (own_transactions.go): a Batch sent as a transaction
//     of its own, BEGIN and COMMIT included, in one round trip, on generic
//     plans. For a few statements that must hold a lock or commit together
//     and need nothing from the client between them.
//   - PipelinedBegin (pipelined_begin.go): a transaction whose BEGIN
//     travels with its first Batch, on generic plans. For a transaction that
//     must look at answers before it decides what to send next, as ingest's
//     group commit does.
//   - CustomPlans (custom_plans.go): statements planned with their actual
//     parameters on every call, for admin lists whose optional filters no
//     single plan fits.
//
// Statements over array parameters are planned again on every execution
// unless forced onto their generic plan, which is why OwnTransactions and
// PipelinedBegin set plan_cache_mode for their transaction; the plan tests
// (internal/pgtest) prove that the generic plans read through indexes.
package db
