package db

import (
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// poolConnsPerCore sizes an ingest server's pool unless DATABASE_URL does
// (pool_max_conns). pgxpool's default of one connection per core (at least
// four) suits work that keeps a connection busy on the CPU, but an ingest
// request holds its connection mostly while PostgreSQL flushes the commit to
// disk and while bytes cross the socket; with more connections in flight,
// more commits share one flush. docs/performance.md has the measurements.
const poolConnsPerCore = 8

// SizeIngestPool gives c the connections an ingest server needs on this
// machine, unless databaseURL names pool_max_conns: edihub serve's pool,
// and the bench's floor, which must have as many commits in flight.
func SizeIngestPool(c *pgxpool.Config, databaseURL string) {
	if !strings.Contains(databaseURL, "pool_max_conns") {
		c.MaxConns = int32(max(4, poolConnsPerCore*runtime.GOMAXPROCS(0)))
	}
}
