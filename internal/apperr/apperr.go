// Package apperr holds the errors edihub shows to its users: a kind, which
// the server maps to an HTTP status in one place (internal/server/errors.go),
// a stable type name that clients may branch on, and a human detail. The
// CLI prints the detail; its exit code does not depend on the kind. Internal
// causes stay in Err and are logged, never shown.
package apperr

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an error by what the caller should do about it.
type Kind int

const (
	Invalid              Kind = iota + 1 // the input is wrong; fix it
	Unauthorized                         // credentials missing or wrong
	NotFound                             // the named thing does not exist
	Conflict                             // the input clashes with what is stored
	Unprocessable                        // well-formed, but cannot be acted on
	TooLarge                             // the body exceeds the configured limit
	UnsupportedMediaType                 // the body is not JSON
	Unavailable                          // a dependency is down; retry later
	Forbidden                            // signed in, but not allowed to do this
	TooManyRequests                      // throttled; wait before trying again
	Timeout                              // the work ran past its time limit and was stopped
	ClientClosed                         // the client went away before the answer
	ClientTimeout                        // the client paused too long while sending
)

// Error is a user-facing error.
type Error struct {
	Kind   Kind
	Type   string // stable, e.g. "idempotency-key-reused"
	Detail string // a sentence for a person
	Err    error  // the internal cause, if any; logged, never shown
	// RetryAfter is how long a throttled client must wait, told to it in
	// whole seconds; 0 says nothing.
	RetryAfter time.Duration
	// IdempotencyKey is the key an Idempotency-Key error is about, shown to
	// the client as the problem's idempotency_key member so that a client
	// sending many keys knows which one was refused; "" shows none.
	IdempotencyKey string
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Detail, e.Err)
	}
	return e.Detail
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an Error with a formatted detail.
func New(kind Kind, typ, format string, args ...any) *Error {
	return &Error{Kind: kind, Type: typ, Detail: fmt.Sprintf(format, args...)}
}

// As returns the user-facing error inside err, if there is one.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
