// Package floor is the bare ingest service `make bench` measures beside
// edihub (Floor).
package floor

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/edi"
	"github.com/lefia/edihub/internal/idocxml"
)

// Floor is the least an ingest service written in Go can do for a new
// message, for `make bench` to measure beside edihub: net/http reads the
// request and answers 201, and pgx runs, in a transaction of its own, the
// insert pgbench runs (scripts/bench/insert.sql), with the body as the
// payload and a random fingerprint. It authenticates nothing, parses no
// JSON, hashes nothing, deduplicates nothing and writes no key or delivery.
//
// A POST to receive-messages is the batch floor: the JSON array of
// envelopes decoded with encoding/json and its items stored with one
// multi-row insert of the same columns, answered 200 with a receipt each.
// A POST to receive-message of IDoc-XML, X12 or EDIFACT is that form's
// floor: the body read with edihub's own parser (idocxml.Parse, edi.Parse,
// which also write each message's JSON view and its canonical form) and
// each message's own bytes stored with one multi-row insert, as edihub
// stores them: what edihub adds to reading the form is then the rest of
// its work (the hashes, the key paths, the claims, the interchange's
// envelope and acknowledgment).
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

// floorInsertRows is floorInsert for a batch: one row per element of the
// arrays, as scripts/bench/insert-rows.sql stores its rows.
const floorInsertRows = `INSERT INTO messages (
    tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
    computed_fingerprint, fingerprint, source_endpoint, integration_id, idempotency_key, remote_addr
) SELECT $1, $2, $3, i.docnum, i.payload, i.hash, i.fingerprint, i.fingerprint, 'receive-messages', NULL, NULL, '127.0.0.1'
FROM unnest($4::text[], $5::json[], $6::bytea[], $7::text[]) AS i (docnum, payload, hash, fingerprint)
ON CONFLICT (tenant_id, environment_id, fingerprint) WHERE fingerprint IS NOT NULL DO NOTHING
RETURNING id`

// floorInsertReceived is floorInsertRows for messages stored as the bytes
// they came as, without a JSON payload, as edihub stores an IDoc's and an
// interchange's.
const floorInsertReceived = `INSERT INTO messages (
    tenant_id, environment_id, message_type_id, docnum, content_type, received_bytes, content_hash,
    computed_fingerprint, fingerprint, source_endpoint, integration_id, idempotency_key, remote_addr
) SELECT $1, $2, $3, i.docnum, $4, i.bytes, i.hash, i.fingerprint, i.fingerprint, 'receive-message', NULL, NULL, '127.0.0.1'
FROM unnest($5::text[], $6::bytea[], $7::bytea[], $8::text[]) AS i (docnum, bytes, hash, fingerprint)
ON CONFLICT (tenant_id, environment_id, fingerprint) WHERE fingerprint IS NOT NULL DO NOTHING
RETURNING id`

// ServeHTTP stores the body of a POST to receive-message as a new message
// and answers 201 with its id, the envelopes of a POST to
// receive-messages, or the IDocs or transaction sets of a POST to
// receive-message, as new messages, answering 200 with their ids; GET
// /readyz answers 200, so that the bench scripts wait for it as they wait
// for edihub.
func (f Floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/readyz":
		return
	case r.Method == http.MethodPost && r.URL.Path == "/api/edi-hub/receive-messages":
		f.storeBatch(w, r)
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
	if contentType := r.Header.Get("Content-Type"); contentType != "application/json" {
		f.storeParsed(w, r, contentType, body)
		return
	}
	fingerprint, hexFingerprint := randomFingerprint()
	var id int64
	var received time.Time
	err = f.Pool.QueryRow(r.Context(), floorInsert, f.TenantID, f.EnvironmentID, f.MessageTypeID,
		hexFingerprint[:19], body, fingerprint, hexFingerprint).Scan(&id, &received)
	if err != nil {
		http.Error(w, fmt.Sprintf("store message: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(append(strconv.AppendInt([]byte(`{"id":`), id, 10), '}'))
}

// randomFingerprint is as wide as a SHA-256 and makes every message new, as
// pgbench's two random numbers do; the floor stores its bytes as the content
// hash and its hex as the fingerprint.
func randomFingerprint() ([]byte, string) {
	fingerprint := make([]byte, 32)
	_, _ = rand.Read(fingerprint)
	return fingerprint, hex.EncodeToString(fingerprint)
}

// randomFingerprints are n random fingerprints (randomFingerprint), for the
// n messages of one request.
func randomFingerprints(n int) (hashes [][]byte, fingerprints []string) {
	hashes, fingerprints = make([][]byte, n), make([]string, n)
	for i := range n {
		hashes[i], fingerprints[i] = randomFingerprint()
	}
	return hashes, fingerprints
}

// floorBatch is the body of a POST to receive-messages.
type floorBatch struct {
	Messages []struct {
		Docnum  string          `json:"docnum"`
		Payload json.RawMessage `json:"payload"`
	} `json:"messages"`
}

// storeBatch decodes a batch and stores its envelopes' payloads with one
// statement.
func (f Floor) storeBatch(w http.ResponseWriter, r *http.Request) {
	var batch floorBatch
	if err := json.NewDecoder(r.Body).Decode(&batch); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n := len(batch.Messages)
	docnums, payloads := make([]string, n), make([][]byte, n)
	for i, m := range batch.Messages {
		docnums[i], payloads[i] = m.Docnum, m.Payload
	}
	hashes, fingerprints := randomFingerprints(n)
	f.answerRows(w, r, http.StatusOK, `{"messages":[`, n, floorInsertRows, f.TenantID, f.EnvironmentID, f.MessageTypeID,
		docnums, payloads, hashes, fingerprints)
}

// storeParsed reads body, stored as of the given Content-Type, with
// edihub's parser of interchanges when it starts as one does
// (edi.LooksLikeInterchange, which edihub asks of a text/plain body), else
// with its parser of IDoc-XML, and stores each message's own bytes with one
// statement.
func (f Floor) storeParsed(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	var docnums []string
	var owns [][]byte
	status, open := http.StatusOK, `{"messages":[`
	if edi.LooksLikeInterchange(body) {
		ic, err := edi.Parse(body, edi.DefaultLimits)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer ic.Release() // as edihub gives its views' memory back
		for _, m := range ic.Messages {
			docnums, owns = append(docnums, m.Docnum), append(owns, m.Bytes)
		}
		open = `{"interchange":{"status":"accepted"},"messages":[`
	} else {
		doc, err := idocxml.Parse(body, "", idocxml.DefaultLimits)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer doc.Release() // as edihub gives its views' memory back
		for _, idoc := range doc.IDocs {
			docnums, owns = append(docnums, idoc.Docnum), append(owns, doc.Own(body, idoc))
		}
		if len(doc.IDocs) == 1 {
			status = http.StatusCreated // as edihub answers a single IDoc
		}
	}
	n := len(owns)
	hashes, fingerprints := randomFingerprints(n)
	f.answerRows(w, r, status, open, n, floorInsertReceived, f.TenantID, f.EnvironmentID, f.MessageTypeID, contentType,
		docnums, owns, hashes, fingerprints)
}

// answerRows runs insert, which stores n messages and returns their ids,
// and answers status with a receipt for each, in an array that open
// starts.
func (f Floor) answerRows(w http.ResponseWriter, r *http.Request, status int, open string, n int, insert string, args ...any) {
	rows, err := f.Pool.Query(r.Context(), insert, args...)
	if err != nil {
		http.Error(w, fmt.Sprintf("store messages: %v", err), http.StatusInternalServerError)
		return
	}
	answer := append(make([]byte, 0, len(open)+n*40), open...)
	var id int64
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
		if answer[len(answer)-1] == '}' {
			answer = append(answer, ',')
		}
		answer = append(strconv.AppendInt(append(answer, `{"status":"accepted","id":`...), id, 10), '}')
		return nil
	})
	if err != nil {
		http.Error(w, fmt.Sprintf("store messages: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(answer, "]}"...))
}
