package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// Cluster is a throwaway PostgreSQL server that a test owns, so that it can
// stop and restart the server under load without disturbing other tests.
type Cluster struct {
	t    testing.TB
	bin  string
	dir  string
	port int
}

// NewCluster creates and starts a cluster in a temporary directory with the
// installed PostgreSQL binaries, and removes it when the test ends.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	c := newClusterDir(t)
	if out, err := c.command("initdb", "-D", c.data(), "-U", "postgres", "--auth=trust", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	if err := c.pgctl("start"); err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	return c
}

// newClusterDir prepares a cluster's directory and port, without a data
// directory yet, and stops and removes the cluster when the test ends.
func newClusterDir(t testing.TB) *Cluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		t.Fatal("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)")
	}
	sort.Strings(bins)
	c := &Cluster{t: t, bin: filepath.Dir(bins[len(bins)-1]), port: freePort(t)}

	// PostgreSQL refuses to run as root; then the cluster belongs to the
	// postgres user, which needs a directory it can enter.
	dir, err := os.MkdirTemp("", "edihub-cluster-")
	if err != nil {
		t.Fatalf("cluster directory: %v", err)
	}
	c.dir = dir
	t.Cleanup(func() {
		_ = c.pgctl("stop", "-m", "immediate")
		_ = os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		owner, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres user to own the cluster: %v", err)
		}
		uid, _ := strconv.Atoi(owner.Uid)
		gid, _ := strconv.Atoi(owner.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatalf("chown cluster directory: %v", err)
		}
	}
	return c
}

// URL is the connection string of the cluster's postgres database.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", c.port)
}

// Restart stops the server at once, cutting every connection, and starts it again.
func (c *Cluster) Restart() {
	c.t.Helper()
	if err := c.pgctl("restart", "-m", "fast"); err != nil {
		c.t.Fatalf("restart cluster: %v", err)
	}
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) pgctl(args ...string) error {
	args = append([]string{"-D", c.data(), "-w", "-l", filepath.Join(c.dir, "log"),
		"-o", fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off", c.port, c.dir)}, args...)
	out, err := c.command("pg_ctl", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %v: %w\n%s", args, err, out)
	}
	return nil
}

// command runs a server binary, as the postgres user when the test is root.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
