// Package apikey creates API keys and derives the hash under which they are
// stored. The key itself is shown once and never stored.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// prefix marks edihub keys so that secret scanners and people recognise them.
const prefix = "edh_"

// Key is a newly generated API key.
type Key struct {
	Secret string   // shown to the user once
	Hash   [32]byte // stored
	Prefix string   // stored, to tell keys apart in listings without the secret
}

// Generate returns a new key with 256 bits of randomness.
func Generate() (Key, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return Key{}, fmt.Errorf("generate api key: %w", err)
	}
	secret := prefix + base64.RawURLEncoding.EncodeToString(raw[:])
	return Key{Secret: secret, Hash: Hash(secret), Prefix: secret[:len(prefix)+6]}, nil
}

// Hash is the stored form of a key. A fast hash is right here, unlike for
// passwords: the key is 256 random bits, so there is nothing to brute-force.
func Hash(secret string) [32]byte {
	return sha256.Sum256([]byte(secret))
}
