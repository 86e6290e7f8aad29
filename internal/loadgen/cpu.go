package loadgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// CPU is the processor time the three parties to a run have used: the
// server, PostgreSQL and the load generator itself. On a machine that all
// three share, throughput is their total CPU per request, so a row that
// splits it says where the time went (docs/performance.md, "Method").
type CPU struct {
	Server, Postgres, Load time.Duration
}

// clockTick is the unit of /proc/<pid>/stat's times: USER_HZ, which is 100
// on every Linux architecture Go runs on.
const clockTick = 10 * time.Millisecond

// readCPU reads the CPU time used so far by process serverPID, by
// PostgreSQL (its server processes, and the backends of database, or of
// every database when that is ""; a backend that exits between two
// readings takes its time with it, which the server's pool of long-lived
// connections avoids), and by this process.
func readCPU(serverPID int, database string) (CPU, error) {
	var c CPU
	var err error
	if c.Server, err = processCPU(strconv.Itoa(serverPID)); err != nil {
		return CPU{}, err
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, stat := range stats {
		pid := filepath.Base(filepath.Dir(stat))
		if comm, err := os.ReadFile("/proc/" + pid + "/comm"); err != nil || string(bytes.TrimSpace(comm)) != "postgres" {
			continue
		}
		if database != "" && otherDatabase(pid, database) {
			continue
		}
		if t, err := processCPU(pid); err == nil {
			c.Postgres += t
		}
	}
	var self syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		return CPU{}, fmt.Errorf("read own CPU time: %w", err)
	}
	c.Load = time.Duration(self.Utime.Nano() + self.Stime.Nano())
	return c, nil
}

// otherDatabase tells whether process pid is a PostgreSQL client backend
// of a database other than database.
func otherDatabase(pid, database string) bool {
	title, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		return true
	}
	db, isClient := backendDatabase(title)
	return isClient && db != database
}

// backendDatabase reads a PostgreSQL process's title: a client backend's
// is "postgres: <cluster>: <user> <database> <host>(<port>) <state>" (no
// "<cluster>: " without a cluster_name, [local] for a host), while the
// server's own processes name what they do.
func backendDatabase(title []byte) (database string, isClient bool) {
	_, rest, _ := bytes.Cut(bytes.TrimRight(title, "\x00 "), []byte(": "))
	if _, afterCluster, named := bytes.Cut(rest, []byte(": ")); named {
		rest = afterCluster
	}
	words := bytes.Fields(rest)
	if len(words) < 3 || !bytes.HasSuffix(words[2], []byte(")")) && !bytes.Equal(words[2], []byte("[local]")) {
		return "", false
	}
	return string(words[1]), true
}

// processCPU is user plus system time of process pid, from /proc.
func processCPU(pid string) (time.Duration, error) {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, fmt.Errorf("read CPU time of process %s: %w", pid, err)
	}
	// The command name, in parentheses, may hold spaces; the fields after
	// it are: state (3), ..., utime (14), stime (15).
	end := bytes.LastIndexByte(raw, ')')
	fields := bytes.Fields(raw[end+1:])
	if end < 0 || len(fields) < 13 {
		return 0, fmt.Errorf("read CPU time of process %s: unexpected /proc stat", pid)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read CPU time of process %s: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// sub is the CPU used between b and c.
func (c CPU) sub(b CPU) CPU {
	return CPU{Server: c.Server - b.Server, Postgres: c.Postgres - b.Postgres, Load: c.Load - b.Load}
}
