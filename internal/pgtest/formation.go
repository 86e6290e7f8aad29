package pgtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Formation is a high-availability formation of its own for one test: a
// pg_auto_failover monitor and three nodes, a primary whose commits wait
// for either of two standbys, made and driven by scripts/ha.sh, as `make
// run-ha` makes one.
type Formation struct {
	t      testing.TB
	dir    string
	script string
	url    string
}

// NewFormation starts a formation; it is stopped and removed when the test
// ends. It needs pg_autoctl (scripts/prerequisites.sh autofailover), and
// takes about half a minute.
func NewFormation(t testing.TB) *Formation {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	f := &Formation{t: t, script: filepath.Join(filepath.Dir(here), "..", "..", "scripts", "ha.sh")}
	// The postgres user runs the nodes and must enter the directory.
	dir, err := os.MkdirTemp("", "edihub-formation-")
	if err != nil {
		t.Fatalf("formation directory: %v", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("formation directory: %v", err)
	}
	f.dir = dir
	t.Cleanup(func() {
		_, _ = f.run("down")
		_ = os.RemoveAll(dir)
	})
	out, err := f.run("up", strconv.Itoa(formationPorts(t)))
	if err != nil {
		t.Fatalf("start the formation: %v\n%s", err, out)
	}
	for line := range strings.Lines(out) {
		if url, ok := strings.CutPrefix(strings.TrimSpace(line), "DATABASE_URL="); ok {
			f.url = url
		}
	}
	if f.url == "" {
		t.Fatalf("scripts/ha.sh up printed no DATABASE_URL:\n%s", out)
	}
	return f
}

// formationPorts finds four consecutive free ports (the monitor's and the
// nodes') below the range of ephemeral ports, where no outgoing connection
// can hold one when a node starts.
func formationPorts(t testing.TB) int {
	t.Helper()
	for range 100 {
		base := 20000 + rand.IntN(10000)
		free := true
		for p := base; p < base+4 && free; p++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				free = false
				continue
			}
			ln.Close()
		}
		if free {
			return base
		}
	}
	t.Fatal("no four free ports for a formation")
	return 0
}

func (f *Formation) run(args ...string) (string, error) {
	cmd := exec.Command(f.script, append([]string{args[0], f.dir}, args[1:]...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// URL is the connection string listing the nodes, for whichever is
// primary (target_session_attrs=read-write).
func (f *Formation) URL() string { return f.url }

// Primary is the node the monitor has as primary now: "node1", "node2" or
// "node3".
func (f *Formation) Primary() string {
	f.t.Helper()
	var name string
	f.monitor(func(c *pgx.Conn) error {
		return c.QueryRow(context.Background(), `SELECT nodename FROM pgautofailover.node
			WHERE reportedstate IN ('primary', 'wait_primary', 'single') AND goalstate = reportedstate
			ORDER BY nodeid LIMIT 1`).Scan(&name)
	})
	return name
}

// Lose kills node as the loss of its machine would.
func (f *Formation) Lose(node string) {
	f.t.Helper()
	if out, err := f.run("lose", node); err != nil {
		f.t.Fatalf("lose %s: %v\n%s", node, err, out)
	}
}

// Back starts a lost node again and waits until the formation is healthy
// (WaitHealthy).
func (f *Formation) Back(node string) {
	f.t.Helper()
	if out, err := f.run("back", node); err != nil {
		f.t.Fatalf("start %s again: %v\n%s", node, err, out)
	}
	f.WaitHealthy(2 * time.Minute)
}

// Switchover hands the primary's role to the standby, as planned
// maintenance does.
func (f *Formation) Switchover() {
	f.t.Helper()
	if out, err := f.run("switchover"); err != nil {
		f.t.Fatalf("switchover: %v\n%s", err, out)
	}
}

// WaitHealthy waits until one node is primary and the others secondary.
func (f *Formation) WaitHealthy(within time.Duration) {
	f.t.Helper()
	deadline := time.Now().Add(within)
	var states string
	for time.Now().Before(deadline) {
		f.monitor(func(c *pgx.Conn) error {
			return c.QueryRow(context.Background(), `SELECT string_agg(reportedstate::text || '/' || goalstate::text, ' ' ORDER BY reportedstate)
				FROM pgautofailover.node`).Scan(&states)
		})
		if states == "primary/primary secondary/secondary secondary/secondary" {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	f.t.Fatalf("the formation is not a primary and two secondaries after %s: %s", within, states)
}

// monitor runs fn on a connection to the monitor.
func (f *Formation) monitor(fn func(*pgx.Conn) error) {
	f.t.Helper()
	port, err := os.ReadFile(filepath.Join(f.dir, "port"))
	if err != nil {
		f.t.Fatalf("formation port: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%s/pg_auto_failover?sslmode=disable", strings.TrimSpace(string(port))))
	if err != nil {
		f.t.Fatalf("connect to the monitor: %v", err)
	}
	defer c.Close(ctx)
	if err := fn(c); err != nil {
		f.t.Fatalf("ask the monitor: %v", err)
	}
}

// Events is the monitor's record of the formation's state changes, one
// line each, oldest first: what a failing test prints to say what the
// formation did around the moment it failed.
func (f *Formation) Events() string {
	f.t.Helper()
	var lines []string
	f.monitor(func(c *pgx.Conn) error {
		rows, err := c.Query(context.Background(), `SELECT format('%s %s %s/%s %s', to_char(eventtime, 'HH24:MI:SS.MS'),
			nodename, reportedstate, goalstate, description) FROM pgautofailover.event ORDER BY eventid`)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return strings.Join(lines, "\n")
}
