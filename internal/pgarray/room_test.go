package pgarray_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lefia/edihub/internal/pgtest"
)

// A batch whose byte arrays are large is written into pgx's write buffer
// grown once to hold them, where pgx, starting every batch from a buffer
// of 1 KiB, would grow it as each parameter is appended and copy what it
// holds each time; and its bytes reach PostgreSQL as sent. The parameters
// are a batch's: its payloads, and for each message its hashes and other
// columns, which are small but many. The payloads are held twice while
// they are sent (the parameter buffer and the write buffer), and not a
// third time.
func TestMakesRoomInTheWriteBufferForABatch(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t) // set up by EncodeDirectly, as the service's pool
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
	send := func() {
		b := &pgx.Batch{}
		b.Queue(`SELECT md5(string_agg(p || h || convert_to(f, 'UTF8'), ''::bytea ORDER BY o))
			FROM unnest($1::bytea[], $2::bytea[], $3::text[], $4::text[], $5::text[], $6::text[])
			     WITH ORDINALITY AS u (p, h, f, f2, f3, f4, o)`, payloads, hashes, fingerprints, fingerprints, fingerprints, fingerprints)
		b.Queue("SELECT 1")
		results := conn.SendBatch(ctx, b)
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
		if got != want {
			t.Fatalf("PostgreSQL read arrays with md5 %s, want %s", got, want)
		}
	}
	send() // prepares the statements
	const runs = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		send()
	}
	runtime.ReadMemStats(&after)
	perRun := float64(after.TotalAlloc-before.TotalAlloc) / runs
	if ratio := perRun / float64(len(all)); ratio > 2.5 {
		t.Errorf("sending %d bytes of arrays allocated %.0f bytes (%.2f ×), want about two buffers of them", len(all), perRun, ratio)
	} else {
		t.Logf("%.2f × the arrays' bytes allocated", ratio)
	}
}
