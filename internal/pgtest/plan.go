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
	rec := &Recorder{marker: marker}
	return poolWith(tb, databaseURL, func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = rec }), rec
}

// TraceQueryStart implements pgx.QueryTracer.
func (r *Recorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	// Explain runs on the pool it explains: its own statement is not the
	// one to remember.
	if strings.Contains(data.SQL, r.marker) && !strings.HasPrefix(data.SQL, "EXPLAIN ") {
		r.mu.Lock()
		r.sql, r.args = data.SQL, data.Args
		r.mu.Unlock()
	}
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (*Recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// last is the recorded query and its arguments.
func (r *Recorder) last(tb testing.TB) (string, []any) {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sql == "" {
		tb.Fatalf("no query containing %q was run", r.marker)
	}
	return r.sql, r.args
}

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
	return r.ExplainOn(tb, pool)
}

// ExplainOn is Explain on q, a transaction whose settings the plan is to
// be made with, or a pool.
func (r *Recorder) ExplainOn(tb testing.TB, q querier) (scans []string, raw []byte) {
	tb.Helper()
	sql, args := r.last(tb)
	if err := q.QueryRow(context.Background(), "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&raw); err != nil {
		tb.Fatalf("explain: %v", err)
	}
	root := parsePlan(tb, raw)
	return scansOf(root, partitionParents(tb, q)), raw
}

// querier is a pool, a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// partitionParents maps each partition, and each index of a partition, to
// the partitioned table or index it belongs to. A plan reads a partitioned
// table (audit_events) through its partitions' indexes, named after the
// partitions; the scans are reported by the parent's names, which are the
// names a test knows and asserts, and a sequential scan of any partition is
// one of the partitioned table.
func partitionParents(tb testing.TB, q querier) map[string]string {
	tb.Helper()
	rows, err := q.Query(context.Background(), `
		SELECT c.relname::text, p.relname::text FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
		WHERE p.relkind IN ('p', 'I')`)
	if err != nil {
		tb.Fatalf("read partitions: %v", err)
	}
	parents, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var pair [2]string
		err := r.Scan(&pair[0], &pair[1])
		return pair, err
	})
	if err != nil {
		tb.Fatalf("read partitions: %v", err)
	}
	m := make(map[string]string, len(parents))
	for _, pair := range parents {
		m[pair[0]] = pair[1]
	}
	return m
}

// parentName is the name a relation is reported by: its partitioned
// parent's, if it is a partition.
func parentName(parents map[string]string, name string) string {
	if parent, ok := parents[name]; ok {
		return parent
	}
	return name
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

func scansOf(n planNode, parents map[string]string) []string {
	var scans []string
	switch {
	case n.NodeType == "Seq Scan":
		scans = append(scans, fmt.Sprintf("Seq Scan on %s", parentName(parents, n.Relation)))
	case n.IndexName != "":
		scans = append(scans, parentName(parents, n.IndexName))
	}
	for _, child := range n.Plans {
		scans = append(scans, scansOf(child, parents)...)
	}
	return scans
}

// ExplainGeneric explains the last recorded query as PostgreSQL plans it
// once for every parameter value: a generic plan, which a prepared
// statement may switch to after a few runs. The query is prepared on a
// connection of its own with plan_cache_mode = force_generic_plan, and
// EXPLAIN EXECUTE shows the plan that the recorded arguments then run
// with; a query whose index use depends on folding a parameter away shows
// here that it does not have it.
func (r *Recorder) ExplainGeneric(tb testing.TB, pool *pgxpool.Pool) (scans []string, raw []byte) {
	tb.Helper()
	sql, args := r.last(tb)
	// A query run through db.CustomPlans leads its arguments with the
	// execution mode, which is pgx's, not the statement's.
	if len(args) > 0 {
		if _, ok := args[0].(pgx.QueryExecMode); ok {
			args = args[1:]
		}
	}
	ctx := context.Background()
	cfg := pool.Config().ConnConfig.Copy()
	cfg.Tracer = nil
	cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	sd, err := conn.Prepare(ctx, "explained", sql)
	if err != nil {
		tb.Fatalf("prepare: %v", err)
	}
	// EXPLAIN takes no parameters of its own, so EXECUTE's arguments are
	// written as literals of the types the statement's parameters have,
	// each quoted by the server.
	literals := make([]string, len(sd.ParamOIDs))
	for i, oid := range sd.ParamOIDs {
		var typ string
		if err := conn.QueryRow(ctx, "SELECT format_type($1, NULL)", oid).Scan(&typ); err != nil {
			tb.Fatalf("name the type of parameter %d: %v", i+1, err)
		}
		var literal string
		if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT quote_nullable($1::%s)", typ), args[i]).Scan(&literal); err != nil {
			tb.Fatalf("quote parameter %d: %v", i+1, err)
		}
		literals[i] = literal + "::" + typ
	}
	explain := "EXPLAIN (FORMAT JSON) EXECUTE explained(" + strings.Join(literals, ", ") + ")"
	if err := conn.QueryRow(ctx, explain).Scan(&raw); err != nil {
		tb.Fatalf("explain: %v", err)
	}
	return scansOf(parsePlan(tb, raw), partitionParents(tb, conn)), raw
}
