// Package password hashes and checks admin passwords with Argon2id, a slow,
// memory-hard hash, so that a leaked users table does not give the passwords
// away.
package password

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/alexedwards/argon2id"
)

// MinLength is the shortest password accepted, in characters.
const MinLength = 12

// maxLength guards the hash against absurdly long inputs.
const maxLength = 1024

// Validate says why a password is not acceptable, or returns nil.
func Validate(pw string) error {
	n := utf8.RuneCountInString(pw)
	switch {
	case n < MinLength:
		return fmt.Errorf("password too short: use at least %d characters", MinLength)
	case n > maxLength:
		return fmt.Errorf("password too long: use at most %d characters", maxLength)
	}
	return nil
}

// cost is what each new hash costs: argon2id's defaults, 64 MiB of memory
// and one pass. The cost is written into the hash, and Check reads it
// from there.
var cost = argon2id.DefaultParams

// UseLowCost makes new hashes cost 1 MiB and one pass, for test suites that
// create and sign in hundreds of users: under the race detector a 64 MiB
// hash takes most of a second of CPU, and such a suite most of its time.
// The hashes are Argon2id all the same and Check verifies them the same
// way. Call it before any test runs (TestMain); never in a server.
func UseLowCost() { cost = lowCost }

var lowCost = &argon2id.Params{Memory: 1024, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Hash validates pw and returns its Argon2id hash in PHC string form.
func Hash(pw string) (string, error) {
	if err := Validate(pw); err != nil {
		return "", err
	}
	h, err := argon2id.CreateHash(pw, cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return h, nil
}

// ErrMismatch means the password does not match the hash.
var ErrMismatch = errors.New("password does not match")

// Check returns nil when pw matches hash, ErrMismatch when it does not.
func Check(pw, hash string) error {
	ok, err := argon2id.ComparePasswordAndHash(pw, hash)
	if err != nil {
		return fmt.Errorf("check password: %w", err)
	}
	if !ok {
		return ErrMismatch
	}
	return nil
}
