package pgarray_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/pgarray"
	"github.com/lefia/edihub/internal/pgtest"
)

// arrays are the parameters the tests send: each kind with a NULL item,
// empty, and NULL itself, with how PostgreSQL prints each as each array
// type.
var arrays = []struct {
	name  string
	value any
	read  map[string]string
}{
	{"payloads", [][]byte{[]byte(`{"a":1}`), nil, []byte(`[]`)},
		map[string]string{"jsonb[]": `{"{\"a\": 1}",NULL,[]}`, "bytea[]": `{"\\x7b2261223a317d",NULL,"\\x5b5d"}`}},
	{"no payloads", [][]byte{}, map[string]string{"jsonb[]": "{}", "bytea[]": "{}"}},
	{"null payloads", [][]byte(nil), map[string]string{"jsonb[]": "NULL", "bytea[]": "NULL"}},
	{"integrations", []uuid.UUID{uuid.MustParse("0b3a1f52-6c39-4b8e-9d0e-3f7a2c5d8e11"), {}},
		map[string]string{"uuid[]": "{0b3a1f52-6c39-4b8e-9d0e-3f7a2c5d8e11,00000000-0000-0000-0000-000000000000}"}},
	{"no integrations", []uuid.UUID{}, map[string]string{"uuid[]": "{}"}},
	{"null integrations", []uuid.UUID(nil), map[string]string{"uuid[]": "NULL"}},
}

// oids are the array types' OIDs.
var oids = map[string]uint32{"jsonb[]": pgtype.JSONBArrayOID, "bytea[]": pgtype.ByteaArrayOID, "uuid[]": pgtype.UUIDArrayOID}

func directMap() *pgtype.Map {
	m := pgtype.NewMap()
	pgarray.Register(m)
	return m
}

func TestEncodesTheBytesPgxEncodes(t *testing.T) {
	direct, own := directMap(), pgtype.NewMap()
	for _, a := range arrays {
		for typ := range a.read {
			oid := oids[typ]
			for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
				want, err := own.Encode(oid, format, a.value, nil)
				if err != nil {
					t.Fatalf("%s, oid %d, format %d: pgx: %v", a.name, oid, format, err)
				}
				got, err := direct.Encode(oid, format, a.value, nil)
				if err != nil {
					t.Fatalf("%s, oid %d, format %d: %v", a.name, oid, format, err)
				}
				if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
					t.Errorf("%s, oid %d, format %d: encoded %q, pgx encodes %q", a.name, oid, format, got, want)
				}
			}
		}
	}
}

// The direct encoders are what runs: pgx's own encoder allocates about
// twenty times an id (its text, the refusal, its parse), the direct one
// the array and twice an id (each id boxed, on its own and in pgx's
// wrapper for [16]byte).
func TestEncodesIDsWithoutTheirText(t *testing.T) {
	ids := make([]uuid.UUID, 100)
	for i := range ids {
		ids[i] = uuid.New()
	}
	allocs := func(m *pgtype.Map) float64 {
		buf := make([]byte, 0, 4096)
		return testing.AllocsPerRun(20, func() {
			if _, err := m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, ids, buf[:0]); err != nil {
				t.Fatal(err)
			}
		})
	}
	direct, own := allocs(directMap()), allocs(pgtype.NewMap())
	if direct > 3*100+5 || own < 4*direct {
		t.Errorf("encoding 100 ids allocated %v times, pgx's own encoder %v", direct, own)
	}
}

// Through a pool set up by EncodeDirectly, every array reaches
// PostgreSQL as sent, NULL items and NULL arrays included.
func TestArraysReachPostgreSQLAsSent(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	var connected atomic.Int32
	cfg.AfterConnect = func(context.Context, *pgx.Conn) error { connected.Add(1); return nil }
	pgarray.EncodeDirectly(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, a := range arrays {
		for typ, want := range a.read {
			var read *string
			if err := pool.QueryRow(ctx, fmt.Sprintf("SELECT $1::%s::text", typ), a.value).Scan(&read); err != nil {
				t.Fatalf("%s as %s: %v", a.name, typ, err)
			}
			got := "NULL"
			if read != nil {
				got = *read
			}
			if got != want {
				t.Errorf("%s as %s: PostgreSQL read %s, want %s", a.name, typ, got, want)
			}
		}
	}
	if connected.Load() == 0 {
		t.Error("EncodeDirectly dropped the pool's own AfterConnect")
	}
}

func BenchmarkEncode(b *testing.B) {
	payloads := make([][]byte, 100)
	ids := make([]uuid.UUID, 100)
	for i := range payloads {
		payloads[i] = bytes.Repeat([]byte("x"), 2048)
		ids[i] = uuid.New()
	}
	for _, m := range []struct {
		name string
		m    *pgtype.Map
	}{{"pgx", pgtype.NewMap()}, {"direct", directMap()}} {
		for _, a := range []struct {
			name  string
			oid   uint32
			value any
		}{{"100 payloads", pgtype.ByteaArrayOID, payloads}, {"100 ids", pgtype.UUIDArrayOID, ids}} {
			b.Run(m.name+"/"+a.name, func(b *testing.B) {
				buf := make([]byte, 0, 256*1024)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.m.Encode(a.oid, pgtype.BinaryFormatCode, a.value, buf[:0]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A large array of payloads is encoded into a buffer grown once for all of
// it, where pgx's buffer, starting small for every statement, would grow
// by doubling and copy what it holds each time: about as many bytes again
// allocated and copied as the array holds.
func TestGrowsTheBufferOnceForAnArray(t *testing.T) {
	payloads := make([][]byte, 100)
	for i := range payloads {
		payloads[i] = bytes.Repeat([]byte("x"), 2048)
	}
	m := directMap()
	const runs = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		encoded, err := m.Encode(pgtype.JSONBArrayOID, pgtype.BinaryFormatCode, payloads, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := 20 + 100*(4+1+2048); len(encoded) != want {
			t.Fatalf("encoded %d bytes, want %d", len(encoded), want)
		}
	}
	runtime.ReadMemStats(&after)
	perRun := (after.TotalAlloc - before.TotalAlloc) / runs
	if perRun > 270_000 {
		t.Errorf("%d bytes allocated to encode 205,320, want one buffer of about that size and room for what follows", perRun)
	}
}

// A statement's parameters are encoded into one buffer, so the ones after
// a large array are appended to the buffer the array was grown into. That
// buffer must have room for them, or the first of them copies the whole
// array into a buffer a quarter larger, and a second large array is grown
// from that copy: a message of 5 MiB held 11 MiB while it was sent, and a
// packet's statement allocated three times its bytes.
func TestLeavesRoomForTheParametersAfterAnArray(t *testing.T) {
	for _, tc := range []struct {
		name       string
		messages   int
		itemBytes  int
		received   bool    // a second array as large, as a packet's received bytes
		allocRatio float64 // allocated bytes ÷ encoded bytes, at most
	}{
		{"a message of 5 MiB", 1, 5 << 20, false, 1.05},
		{"a packet of 1,000 IDocs", 1000, 9000, true, 1.6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			large := make([][]byte, tc.messages)
			fingerprints, hashes := make([]string, tc.messages), make([][]byte, tc.messages)
			for i := range large {
				large[i] = bytes.Repeat([]byte("x"), tc.itemBytes)
				fingerprints[i], hashes[i] = strings.Repeat("f", 64), bytes.Repeat([]byte{1}, 32)
			}
			// What MessageStoreNew sends after its payloads, for each message.
			small := func(m *pgtype.Map, buf []byte) []byte {
				for _, p := range []struct {
					oid   uint32
					value any
				}{{pgtype.ByteaArrayOID, hashes}, {pgtype.ByteaArrayOID, hashes}, {pgtype.TextArrayOID, fingerprints}} {
					var err error
					if buf, err = m.Encode(p.oid, pgtype.BinaryFormatCode, p.value, buf); err != nil {
						t.Fatal(err)
					}
				}
				return buf
			}
			m := directMap()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			buf, err := m.Encode(pgtype.JSONBArrayOID, pgtype.BinaryFormatCode, large, make([]byte, 0, 256))
			if err != nil {
				t.Fatal(err)
			}
			buf = small(m, buf)
			if tc.received {
				if buf, err = m.Encode(pgtype.ByteaArrayOID, pgtype.BinaryFormatCode, large, buf); err != nil {
					t.Fatal(err)
				}
				buf = small(m, buf)
			}
			runtime.ReadMemStats(&after)
			ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(buf))
			t.Logf("allocated %.2f × the %d bytes encoded", ratio, len(buf))
			if ratio > tc.allocRatio {
				t.Errorf("allocated %.2f × the %d bytes encoded, want at most %.2f ×", ratio, len(buf), tc.allocRatio)
			}
		})
	}
}
