package pgtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Recorder remembers the SQL and arguments of the last query a pool ran
// whose text contains a marker, so that a test can EXPLAIN exactly what a
// service sent, with the same arguments.
type Recorder struct {
	marker string
	mu     sync.Mutex
	sql    string
	args   []any
}

// TracedPool opens a pool on databaseURL, closed when the test ends, that
// records its last query containing marker.
func TracedPool(tb testing.TB, databaseURL, marker string) (*pgxpool.Pool, *Recorder) {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		tb.Fatalf("parse pool config: %v", err)
	}
	rec := &Recorder{marker: marker}
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("open pool: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool, rec
}

// TraceQueryStart implements pgx.QueryTracer.
func (r *Recorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.Contains(data.SQL, r.marker) {
		r.mu.Lock()
		r.sql, r.args = data.SQL, data.Args
		r.mu.Unlock()
	}
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (*Recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// planNode is the part of EXPLAIN (FORMAT JSON) output that Explain and
// Scans read.
type planNode struct {
	NodeType  string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	IndexName string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Plans     []planNode `json:"Plans"`
}

// Explain explains the last recorded query with its arguments and returns
// how the plan reads tables: "Seq Scan on <table>" for a sequential scan,
// the index's name for an index or bitmap index scan. raw is the whole
// plan, for failure messages.
func (r *Recorder) Explain(tb testing.TB, pool *pgxpool.Pool) (scans []string, raw []byte) {
	tb.Helper()
	r.mu.Lock()
	sql, args := r.sql, r.args
	r.mu.Unlock()
	if sql == "" {
		tb.Fatalf("no query containing %q was run", r.marker)
	}
	if err := pool.QueryRow(context.Background(), "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&raw); err != nil {
		tb.Fatalf("explain: %v", err)
	}
	root := parsePlan(tb, raw)
	return scansOf(root), raw
}

func parsePlan(tb testing.TB, raw []byte) planNode {
	tb.Helper()
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		tb.Fatalf("read plan %s: %v", raw, err)
	}
	return plans[0].Plan
}

// Scan is how a plan reads a table: Index is empty for a sequential scan,
// and Cond is the index condition, the part of the lookup the index
// narrows (what it does not is filtered row by row).
type Scan struct {
	Relation, Index, Cond string
}

// Scans returns every table read of an EXPLAIN (FORMAT JSON) plan, in plan
// order. A bitmap scan is reported once, by its index and the table of the
// heap scan above it.
func Scans(tb testing.TB, raw []byte) []Scan {
	tb.Helper()
	var scans []Scan
	var walk func(n planNode, table string)
	walk = func(n planNode, table string) {
		if n.Relation != "" {
			table = n.Relation
		}
		switch {
		case n.NodeType == "Seq Scan":
			scans = append(scans, Scan{Relation: table})
		case n.IndexName != "":
			scans = append(scans, Scan{Relation: table, Index: n.IndexName, Cond: n.IndexCond})
		}
		for _, child := range n.Plans {
			walk(child, table)
		}
	}
	walk(parsePlan(tb, raw), "")
	return scans
}

func scansOf(n planNode) []string {
	var scans []string
	switch {
	case n.NodeType == "Seq Scan":
		scans = append(scans, fmt.Sprintf("Seq Scan on %s", n.Relation))
	case n.IndexName != "":
		scans = append(scans, n.IndexName)
	}
	for _, child := range n.Plans {
		scans = append(scans, scansOf(child)...)
	}
	return scans
}
