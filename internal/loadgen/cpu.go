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
	// postgres is what a reading (readCPU) holds of PostgreSQL instead of
	// Postgres: each process's time, by its pid and start time, so that the
	// time between two readings counts only the processes that were there
	// at the second (see sub).
	postgres map[postgresProcess]time.Duration
}

// postgresProcess names one PostgreSQL process for as long as it runs: a
// pid may be reused by a process started later.
type postgresProcess struct {
	pid   string
	start int64
}

// clockTick is the unit of /proc/<pid>/stat's times: USER_HZ, which is 100
// on every Linux architecture Go runs on.
const clockTick = 10 * time.Millisecond

// readCPU reads the CPU time used so far by process serverPID, by
// PostgreSQL (its server processes, and the backends of database, or of
// every database when that is ""; a backend that exits between two
// readings takes its time since the first with it, which the server's pool
// of long-lived connections avoids), and by this process.
func readCPU(serverPID int, database string) (CPU, error) {
	c := CPU{postgres: map[postgresProcess]time.Duration{}}
	var err error
	if c.Server, _, err = processCPU(strconv.Itoa(serverPID)); err != nil {
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
		if t, start, err := processCPU(pid); err == nil {
			c.postgres[postgresProcess{pid, start}] = t
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

// processCPU is user plus system time of process pid, and its start time
// (in ticks since boot), from /proc.
func processCPU(pid string) (cpu time.Duration, start int64, err error) {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("read CPU time of process %s: %w", pid, err)
	}
	// The command name, in parentheses, may hold spaces; the fields after
	// it are: state (3), ..., utime (14), stime (15), ..., starttime (22).
	end := bytes.LastIndexByte(raw, ')')
	fields := bytes.Fields(raw[end+1:])
	if end < 0 || len(fields) < 20 {
		return 0, 0, fmt.Errorf("read CPU time of process %s: unexpected /proc stat", pid)
	}
	var n [3]int64
	for i, f := range [][]byte{fields[11], fields[12], fields[19]} {
		if n[i], err = strconv.ParseInt(string(f), 10, 64); err != nil {
			return 0, 0, fmt.Errorf("read CPU time of process %s: %w", pid, err)
		}
	}
	return time.Duration(n[0]+n[1]) * clockTick, n[2], nil
}

// sub is the CPU used between b and c. PostgreSQL's is that of the
// processes c read: since b for those b read too, all of it for those
// started since. A process that exited in between is left out rather than
// subtracted, so the share is never negative, however many backends of
// other clients come and go.
func (c CPU) sub(b CPU) CPU {
	used := CPU{Server: c.Server - b.Server, Load: c.Load - b.Load}
	for p, t := range c.postgres {
		used.Postgres += t - b.postgres[p]
	}
	return used
}
