package pgarray_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/pgarray"
	"github.com/lefia/edihub/internal/pgtest"
)

// A connection keeps the parameter and write buffers its batches grew, and
// the batches after it are encoded into them: a batch of 100 payloads of
// 4 KiB allocated twice its arrays' bytes each time, and now far less. What
// PostgreSQL reads is each batch's own bytes, with single statements and
// arrays too large to keep in between.
func TestBatchesReuseTheBuffersOfTheBatchBefore(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pgarray.EncodeDirectly(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()

	const items = 100
	payloadsOf := func(seed, size int) [][]byte {
		payloads := make([][]byte, items)
		for i := range payloads {
			payloads[i] = bytes.Repeat([]byte{byte(seed + i)}, size)
		}
		return payloads
	}
	const query = `SELECT md5(string_agg(p, ''::bytea ORDER BY o)) FROM unnest($1::bytea[]) WITH ORDINALITY AS u (p, o)`
	md5Of := func(payloads [][]byte) string {
		sum := md5.Sum(bytes.Join(payloads, nil))
		return hex.EncodeToString(sum[:])
	}
	sendBatch := func(payloads [][]byte, want string) {
		t.Helper()
		b := &pgx.Batch{}
		b.Queue(query, payloads)
		b.Queue("SELECT 1")
		if got := sendMD5Batch(t, conn, b); got != want {
			t.Fatalf("PostgreSQL read a batch's array with md5 %s, want %s", got, want)
		}
	}
	sendAlone := func(payloads [][]byte) {
		t.Helper()
		var got string
		if err := conn.QueryRow(ctx, query, payloads).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := md5Of(payloads); got != want {
			t.Fatalf("PostgreSQL read a statement's array with md5 %s, want %s", got, want)
		}
	}

	batches, wants := make([][][]byte, 8), make([]string, 8)
	for i := range batches {
		batches[i] = payloadsOf(i*items, 4096)
		wants[i] = md5Of(batches[i])
	}
	sendBatch(batches[0], wants[0])
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, payloads := range batches[1:] {
		sendBatch(payloads, wants[i+1])
	}
	runtime.ReadMemStats(&after)
	perBatch := (after.TotalAlloc - before.TotalAlloc) / uint64(len(batches)-1)
	arrays := uint64(items * 4096)
	t.Logf("a batch of %d arrays' bytes allocated %d bytes", arrays, perBatch)
	if perBatch > arrays/2 {
		t.Errorf("a batch of %d arrays' bytes allocated %d bytes, want at most half as many: its buffers were not kept", arrays, perBatch)
	}

	// Between batches: a statement of its own, an array larger than a
	// connection keeps, and batches again, each read as sent.
	for _, p := range []struct {
		alone bool
		size  int
	}{{true, 4096}, {false, 4096}, {false, 64 << 10}, {true, 4096}, {false, 4096}, {false, 2048}} {
		payloads := payloadsOf(p.size, p.size)
		if p.alone {
			sendAlone(payloads)
		} else {
			sendBatch(payloads, md5Of(payloads))
		}
	}
}
