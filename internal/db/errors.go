package db

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNotFound is returned by lookups that match no row, so that callers need
// not know which driver the queries run on.
var ErrNotFound = pgx.ErrNoRows

// IsNotFound reports whether err means a query matched no row.
func IsNotFound(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// UniqueViolation returns the name of the violated unique constraint or index
// when err is a unique violation (SQLSTATE 23505).
func UniqueViolation(err error) (constraint string, ok bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return pgErr.ConstraintName, true
	}
	return "", false
}

// IsUnavailable reports whether err means the database could not be reached
// or could not serve the request right now, as opposed to rejecting it. Such
// failures are worth a retry by the client: the server answers 503.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, pgx.ErrNoRows) || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "08", // connection exception
			"53", // insufficient resources, including too many connections
			"57": // operator intervention: admin shutdown, crash shutdown, cannot connect now
			return true
		}
		return false
	}
	// Failures to talk to the server at all: refused or dropped connections,
	// timeouts while dialling or acquiring a pooled connection, a connection
	// that broke mid-transaction.
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded)
}
