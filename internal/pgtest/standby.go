package pgtest

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/peterldowns/pgtestdb"
)

// StandbySlot is the physical replication slot a standby of NewStandby
// keeps on its primary, as a pg_auto_failover standby keeps one.
const StandbySlot = "edihub_test_standby"

// NewStandby makes a streaming standby of c, copied with pg_basebackup,
// replicating through the slot StandbySlot, and starts it. It is
// asynchronous until the primary names it in synchronous_standby_names
// (its application_name is StandbySlot too). Being a cluster of its own it
// is stopped and removed when the test ends.
func (c *Cluster) NewStandby() *Cluster {
	c.t.Helper()
	s := newClusterDir(c.t)
	// -R writes standby.signal and the primary's address; -C -S creates
	// the slot on the primary, which keeps the WAL the standby has not
	// received while it is stopped.
	if out, err := s.command("pg_basebackup", "-D", s.data(), "-h", "127.0.0.1", "-p", strconv.Itoa(c.port), "-U", "postgres",
		"-X", "stream", "-R", "-C", "-S", StandbySlot, "--no-sync",
		"-d", "application_name="+StandbySlot).CombinedOutput(); err != nil {
		c.t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	s.Start()
	return s
}

// Start starts a stopped cluster.
func (c *Cluster) Start() {
	c.t.Helper()
	if err := c.pgctl("start"); err != nil {
		c.t.Fatalf("start cluster: %v", err)
	}
}

// Stop stops the cluster at once, as a lost machine stops.
func (c *Cluster) Stop() {
	c.t.Helper()
	if err := c.pgctl("stop", "-m", "immediate"); err != nil {
		c.t.Fatalf("stop cluster: %v", err)
	}
}

// Exec runs sql on the cluster's postgres database, as its superuser.
func (c *Cluster) Exec(sql string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		c.t.Fatalf("connect to the cluster: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
}

// MigratedURL returns the connection string of a new, migrated database on
// the cluster, as URL does on the tests' server. Its role may read the
// replication statistics, as edihub's role must in production to see its
// standbys (docs/operations.md, "High availability").
func (c *Cluster) MigratedURL() string {
	c.t.Helper()
	conf := configFor(c.t, c.URL())
	// pgtestdb creates a role and a template once per process and name:
	// a role of the cluster's own has them made on this cluster too.
	conf.TestRole = &pgtestdb.Role{
		Username: "edihub_test_" + strconv.Itoa(c.port), Password: pgtestdb.DefaultRolePassword,
		Capabilities: pgtestdb.DefaultRoleCapabilities,
	}
	url := pgtestdb.Custom(c.t, conf, migrator{}).URL()
	c.Exec("GRANT pg_read_all_stats TO " + conf.TestRole.Username)
	return url
}

// Address is databaseURL, a database of another cluster, pointed at this
// one: a primary's database as its standby serves it.
func (c *Cluster) Address(databaseURL string) string {
	c.t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		c.t.Fatalf("parse %q: %v", databaseURL, err)
	}
	u.Host = "127.0.0.1:" + strconv.Itoa(c.port)
	return u.String()
}

// WaitReplayed waits until the standby c has replayed everything its
// primary had written when it was called.
func (c *Cluster) WaitReplayed(primary *Cluster) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := pgx.Connect(ctx, primary.URL())
	if err != nil {
		c.t.Fatalf("connect to the primary: %v", err)
	}
	defer p.Close(ctx)
	var written string
	if err := p.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&written); err != nil {
		c.t.Fatalf("read the primary's position: %v", err)
	}
	s, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		c.t.Fatalf("connect to the standby: %v", err)
	}
	defer s.Close(ctx)
	c.waitFor(ctx, "the standby replays up to "+written, func() (replayed bool, err error) {
		err = s.QueryRow(ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, written).Scan(&replayed)
		return replayed, err
	})
}

// waitFor asks check every 20 ms until it answers true, and fails the test
// when check fails or ctx ends first.
func (c *Cluster) waitFor(ctx context.Context, what string, check func() (bool, error)) {
	c.t.Helper()
	for {
		done, err := check()
		if err != nil {
			c.t.Fatalf("%s: %v", what, err)
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("%s: not done within a minute", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Synchronous names the standbys whose confirmation the primary c waits
// for at every commit (synchronous_standby_names), as pg_auto_failover
// names its standby, and returns once one of them confirms commits; ""
// lets the primary go on alone, as pg_auto_failover does when its standby
// is lost, and returns at once.
func (c *Cluster) Synchronous(names string) {
	c.t.Helper()
	c.Exec(`ALTER SYSTEM SET synchronous_standby_names = '` + names + `'`)
	c.Exec(`SELECT pg_reload_conf()`)
	if names == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		c.t.Fatalf("connect to the primary: %v", err)
	}
	defer conn.Close(ctx)
	c.waitFor(ctx, "a standby of "+names+" confirms commits", func() (confirming bool, err error) {
		err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum'))`).Scan(&confirming)
		return confirming, err
	})
}
