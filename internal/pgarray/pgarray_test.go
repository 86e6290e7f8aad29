package pgarray_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/pgarray"
	"github.com/lefia/edihub/internal/pgtest"
)

// arrays are the parameters the tests send: each kind with a NULL item,
// empty, and NULL itself.
var arrays = []struct {
	name  string
	oids  []uint32
	value any
}{
	{"payloads", []uint32{pgtype.JSONBArrayOID, pgtype.ByteaArrayOID}, [][]byte{[]byte(`{"a":1}`), nil, []byte(`[]`)}},
	{"no payloads", []uint32{pgtype.JSONBArrayOID, pgtype.ByteaArrayOID}, [][]byte{}},
	{"null payloads", []uint32{pgtype.JSONBArrayOID, pgtype.ByteaArrayOID}, [][]byte(nil)},
	{"integrations", []uint32{pgtype.UUIDArrayOID}, []uuid.UUID{uuid.MustParse("0b3a1f52-6c39-4b8e-9d0e-3f7a2c5d8e11"), {}}},
	{"no integrations", []uint32{pgtype.UUIDArrayOID}, []uuid.UUID{}},
	{"null integrations", []uint32{pgtype.UUIDArrayOID}, []uuid.UUID(nil)},
}

func directMap() *pgtype.Map {
	m := pgtype.NewMap()
	pgarray.Register(m)
	return m
}

func TestEncodesTheBytesPgxEncodes(t *testing.T) {
	direct, own := directMap(), pgtype.NewMap()
	for _, a := range arrays {
		for _, oid := range a.oids {
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
	var connected int
	cfg.AfterConnect = func(context.Context, *pgx.Conn) error { connected++; return nil }
	pgarray.EncodeDirectly(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, a := range arrays {
		for _, oid := range a.oids {
			typ := map[uint32]string{pgtype.JSONBArrayOID: "jsonb[]", pgtype.ByteaArrayOID: "bytea[]", pgtype.UUIDArrayOID: "uuid[]"}[oid]
			var text *string
			query := fmt.Sprintf("SELECT $1::%s::text", typ)
			if err := pool.QueryRow(ctx, query, a.value).Scan(&text); err != nil {
				t.Fatalf("%s as %s: %v", a.name, typ, err)
			}
			if want := expectedText(a.value, typ); fmt.Sprint(deref(text)) != want {
				t.Errorf("%s as %s: PostgreSQL read %v, want %s", a.name, typ, deref(text), want)
			}
		}
	}
	if connected == 0 {
		t.Error("EncodeDirectly dropped the pool's own AfterConnect")
	}
}

func deref(s *string) any {
	if s == nil {
		return "NULL"
	}
	return *s
}

// expectedText is how PostgreSQL prints the arrays above.
func expectedText(value any, typ string) string {
	switch v := value.(type) {
	case [][]byte:
		switch {
		case v == nil:
			return "NULL"
		case len(v) == 0:
			return "{}"
		case typ == "jsonb[]":
			return `{"{\"a\": 1}",NULL,[]}`
		default:
			return `{"\\x7b2261223a317d",NULL,"\\x5b5d"}`
		}
	case []uuid.UUID:
		switch {
		case v == nil:
			return "NULL"
		case len(v) == 0:
			return "{}"
		default:
			return "{0b3a1f52-6c39-4b8e-9d0e-3f7a2c5d8e11,00000000-0000-0000-0000-000000000000}"
		}
	}
	panic("no expected text")
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
