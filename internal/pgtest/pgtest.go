// Package pgtest gives each test its own freshly migrated PostgreSQL database,
// cloned from a template in milliseconds, so tests run in parallel, commit
// real transactions and race on real unique indexes without seeing each other.
package pgtest

import (
	"context"
	"database/sql"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver pgtestdb uses
	"github.com/peterldowns/pgtestdb"
	"github.com/peterldowns/pgtestdb/migrators/common"

	"github.com/lefia/edihub/internal/pgarray"
	"github.com/lefia/edihub/internal/schema"
	"github.com/lefia/edihub/migrations"
)

// DefaultURL is the server tests use when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// URL returns the connection string of a new, migrated database that is
// dropped when the test ends (kept when it fails, for inspection).
func URL(t testing.TB) string {
	t.Helper()
	return pgtestdb.Custom(t, serverConfig(t), migrator{}).URL()
}

// Pool returns a pool on a new, migrated database.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return PoolFor(t, URL(t))
}

// PoolFor opens a pool on databaseURL that is closed when the test ends.
func PoolFor(t testing.TB, databaseURL string) *pgxpool.Pool {
	t.Helper()
	return poolWith(t, databaseURL, func(*pgxpool.Config) {})
}

// poolWith opens a pool on databaseURL, with its configuration changed by
// configure, that is closed when the test ends.
func poolWith(tb testing.TB, databaseURL string, configure func(*pgxpool.Config)) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		tb.Fatalf("parse pool config: %v", err)
	}
	// Tests send parameters as the service does.
	pgarray.EncodeDirectly(cfg)
	configure(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("open pool: %v", err)
	}
	tb.Cleanup(pool.Close)
	tb.Cleanup(func() { requireKeysHaveTheirMessages(tb, pool) })
	return pool
}

// requireKeysHaveTheirMessages fails a test that left a message key whose
// message is not there. No foreign key checks this (migration 037): the
// statements that store and delete messages keep it so, and every test
// that uses a pool checks what it did. A database without the table, or
// one the test made unreachable, is not checked.
func requireKeysHaveTheirMessages(tb testing.TB, pool *pgxpool.Pool) {
	if tb.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var orphans int64
	err := pool.QueryRow(ctx, `
		SELECT count(*) FROM message_keys k
		WHERE NOT EXISTS (SELECT FROM messages m WHERE m.tenant_id = k.tenant_id AND m.id = k.message_id)`).Scan(&orphans)
	if err == nil && orphans > 0 {
		tb.Errorf("%d message keys name a message of their tenant that is not there", orphans)
	}
}

// EmptyURL returns the connection string of a new database with no tables,
// for tests of the migrations themselves.
func EmptyURL(t testing.TB) string {
	t.Helper()
	return pgtestdb.Custom(t, serverConfig(t), pgtestdb.NoopMigrator{}).URL()
}

// SuperuserURL is databaseURL with the test server's user, for the few
// things only a superuser may do to a test's database (turning
// foreign-key checks off while a fill runs, rewriting its statistics).
func SuperuserURL(tb testing.TB, databaseURL string) string {
	tb.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		tb.Fatalf("parse %q: %v", databaseURL, err)
	}
	server, err := url.Parse(ServerURL())
	if err != nil {
		tb.Fatalf("parse the server's URL: %v", err)
	}
	u.User = server.User
	return u.String()
}

// ServerURL is the connection string of the server the test databases live
// on, as its superuser; fault tests use it to terminate backends.
func ServerURL() string {
	if raw := os.Getenv("TEST_DATABASE_URL"); raw != "" {
		return raw
	}
	return DefaultURL
}

func serverConfig(t testing.TB) pgtestdb.Config {
	t.Helper()
	return configFor(t, ServerURL())
}

// configFor is where pgtestdb makes databases: the server of serverURL,
// as the user it names.
func configFor(t testing.TB, serverURL string) pgtestdb.Config {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("parse %q: %v", serverURL, err)
	}
	password, _ := u.User.Password()
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return pgtestdb.Config{
		DriverName: "pgx",
		Host:       u.Hostname(),
		Port:       port,
		User:       u.User.Username(),
		Password:   password,
		Database:   strings.TrimPrefix(u.Path, "/"),
		Options:    u.RawQuery,
	}
}

// migrator builds the template database from the embedded migrations; its
// hash changes with them, so an edited migration gets a new template.
type migrator struct{}

func (migrator) Hash() (string, error) {
	// Names count as much as contents: goose's version is the file name, so
	// a renumbered migration is a different schema history.
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return "", err
	}
	h := common.NewRecursiveHash()
	h.AddField("river", migrations.RiverVersion)
	// The migrations give audit_events partitions up to a month or two past
	// the day they ran (migration 015); serve keeps adding them, but a
	// template is not served. A template made in an earlier month is made
	// again, so that a test's inserts always have a partition.
	h.AddField("month", time.Now().UTC().Format("2006-01"))
	for _, name := range files {
		content, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return "", err
		}
		h.AddField("name", name)
		h.Add(content)
	}
	return h.String(), nil
}

func (migrator) Migrate(ctx context.Context, db *sql.DB, _ pgtestdb.Config) error {
	return schema.MigrateDB(ctx, db)
}
