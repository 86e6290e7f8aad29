package loadgen

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Floor is the least an ingest service written in Go can do for a new
// message, for `make bench` to measure beside edihub: net/http reads the
// request and answers 201, and pgx runs, in a transaction of its own, the
// insert pgbench runs (scripts/bench/insert.sql), with the body as the
// payload and a random fingerprint. It authenticates nothing, parses no
// JSON, hashes nothing, deduplicates nothing and writes no key or delivery.
//
// Its ratio to pgbench on the same cores is therefore the most that any
// HTTP service in Go can reach there. What it pays on top of PostgreSQL's
// insert, net/http, pgx, their system calls and the load generator's
// requests, edihub pays too, and pgbench with its lighter client does not.
type Floor struct {
	Pool *pgxpool.Pool
	// TenantID, EnvironmentID and MessageTypeID are the bench tenant's,
	// as pgbench's -D variables name them.
	TenantID, EnvironmentID, MessageTypeID int64
}

// floorInsert is scripts/bench/insert.sql's statement, with parameters.
const floorInsert = `INSERT INTO messages (
    tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
    computed_fingerprint, fingerprint, source_endpoint, integration_id, idempotency_key, remote_addr
) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, 'receive-message', NULL, NULL, '127.0.0.1')
ON CONFLICT (tenant_id, environment_id, fingerprint) WHERE fingerprint IS NOT NULL DO NOTHING
RETURNING id, received_at`

// ServeHTTP stores the body of a POST to receive-message as a new message
// and answers 201 with its id; GET /readyz answers 200, so that the bench
// scripts wait for it as they wait for edihub.
func (f Floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/readyz":
		return
	case r.Method != http.MethodPost || r.URL.Path != "/api/edi-hub/receive-message":
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// A random fingerprint, as wide as a SHA-256, makes every message new,
	// as pgbench's two random numbers do.
	var fingerprint [32]byte
	rand.Read(fingerprint[:])
	hexFingerprint := hex.EncodeToString(fingerprint[:])
	var id int64
	var received time.Time
	err = f.Pool.QueryRow(r.Context(), floorInsert, f.TenantID, f.EnvironmentID, f.MessageTypeID,
		hexFingerprint[:19], body, fingerprint[:], hexFingerprint).Scan(&id, &received)
	if err != nil {
		http.Error(w, fmt.Sprintf("store message: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(append(strconv.AppendInt([]byte(`{"id":`), id, 10), '}'))
}
