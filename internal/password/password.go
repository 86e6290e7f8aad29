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

// Hash validates pw and returns its Argon2id hash in PHC string form.
func Hash(pw string) (string, error) {
	if err := Validate(pw); err != nil {
		return "", err
	}
	h, err := argon2id.CreateHash(pw, argon2id.DefaultParams)
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
