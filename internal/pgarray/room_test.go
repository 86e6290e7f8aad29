package pgarray_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/pgarray"
	"github.com/lefia/edihub/internal/pgtest"
)

// capacity is a frontend message of no bytes that notes the capacity of
// the write buffer it is appended to.
type capacity struct{ seen *int }

func (capacity) Frontend()                           {}
func (c capacity) Encode(dst []byte) ([]byte, error) { *c.seen = cap(dst); return dst, nil }
func (capacity) Decode([]byte) error                 { return nil }

// A batch whose byte arrays are large is written into pgx's write buffer
// grown once to hold them before pgx encodes the batch, where pgx, starting
// every batch from a buffer of 1 KiB, would grow it as each parameter is
// appended and copy what it holds each time; and the batch reaches
// PostgreSQL as sent. The parameters are a batch's: its payloads, and for
// each message its hashes and other columns, which are small but many.
func TestMakesRoomInTheWriteBufferForABatch(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	pgarray.EncodeDirectly(cfg)
	if cfg.ConnConfig.Tracer != pgarray.SendRoom {
		t.Fatalf("EncodeDirectly gave the pool the tracer %#v, want SendRoom", cfg.ConnConfig.Tracer)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	payloads, hashes, fingerprints := make([][]byte, 100), make([][]byte, 100), make([]string, 100)
	var all []byte
	for i := range payloads {
		payloads[i] = bytes.Repeat([]byte{byte(i)}, 4096)
		hashes[i] = bytes.Repeat([]byte{byte(i + 1)}, 32)
		fingerprints[i] = strings.Repeat(string(rune('a'+i%26)), 64)
		all = append(append(append(all, payloads[i]...), hashes[i]...), fingerprints[i]...)
	}
	sum := md5.Sum(all)
	want := hex.EncodeToString(sum[:])
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	batch := func() *pgx.Batch {
		b := &pgx.Batch{}
		b.Queue(`SELECT md5(string_agg(p || h || convert_to(f, 'UTF8'), ''::bytea ORDER BY o))
			FROM unnest($1::bytea[], $2::bytea[], $3::text[], $4::text[], $5::text[], $6::text[])
			     WITH ORDINALITY AS u (p, h, f, f2, f3, f4, o)`, payloads, hashes, fingerprints, fingerprints, fingerprints, fingerprints)
		b.Queue("SELECT 1")
		return b
	}

	var before, after int
	frontend := conn.Conn().PgConn().Frontend()
	frontend.Send(capacity{&before})
	pgarray.SendRoom.TraceBatchStart(ctx, conn.Conn(), pgx.TraceBatchStartData{Batch: batch()})
	frontend.Send(capacity{&after})
	if before >= len(all) || after < len(all)+100*(4+1) {
		t.Errorf("the write buffer held %d bytes before the batch and %d after room was made, want room for its %d bytes of arrays", before, after, len(all))
	}

	if got := sendMD5Batch(t, conn, batch()); got != want {
		t.Fatalf("PostgreSQL read arrays with md5 %s, want %s", got, want)
	}
}

// sendMD5Batch sends b, a batch of a query that answers an md5 and a
// statement after it, on conn, and returns the md5.
func sendMD5Batch(t *testing.T, conn *pgxpool.Conn, b *pgx.Batch) string {
	t.Helper()
	results := conn.SendBatch(t.Context(), b)
	var got string
	if err := results.QueryRow().Scan(&got); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Exec(); err != nil {
		t.Fatal(err)
	}
	if err := results.Close(); err != nil {
		t.Fatal(err)
	}
	return got
}
