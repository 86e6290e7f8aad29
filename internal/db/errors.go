package db

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNotFound is returned by the queries of On when a lookup matches no
// row, so that callers need not know which driver the queries run on.
var ErrNotFound = errors.New("db: no row found")

// ErrCommitUnconfirmed is the error of a confirmed commit (PipelinedBegin,
// OwnTransactions) that no synchronous standby confirmed: the transaction
// is committed on the primary alone, so what it stored is on one machine
// and must not be acknowledged as safe.
var ErrCommitUnconfirmed = errors.New("db: committed on the primary alone, no synchronous standby confirmed the commit")

// UniqueViolation returns the name of the violated unique constraint or index
// when err is a unique violation (SQLSTATE 23505).
func UniqueViolation(err error) (constraint string, ok bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return pgErr.ConstraintName, true
	}
	return "", false
}

// IsForeignKeyViolation reports whether err is a foreign-key violation
// (SQLSTATE 23503): a row refers to one that does not exist (any more).
func IsForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}

// IsUnavailable reports whether err means the database could not be reached
// or could not serve the request right now, as opposed to rejecting it. Such
// failures are worth a retry by the client: the server answers 503.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, pgx.ErrNoRows) || errors.Is(err, context.Canceled) {
		return false
	}
	// A connection that could not be opened is unavailability whatever the
	// server said when it refused: a database that does not allow
	// connections (55000), too many clients (53300), a shutdown (57P01) or
	// a start-up (57P03) all end in a FATAL error at connect time, which
	// must not be mistaken for a statement the server rejected.
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "57014":
			// query_canceled: a statement cancelled on request or by
			// statement_timeout hit a time limit; it is not an outage.
			return false
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			strings.HasPrefix(pgErr.Code, "53"), // insufficient resources, including too many connections
			strings.HasPrefix(pgErr.Code, "57"): // operator intervention: admin shutdown, crash shutdown, cannot connect now
			return true
		}
		return false
	}
	// Failures to talk to the server at all: refused or dropped connections,
	// timeouts while dialling or acquiring a pooled connection, a connection
	// that broke mid-transaction.
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded)
}
