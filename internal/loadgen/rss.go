package loadgen

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Memory is a process's resident set as /proc/<pid>/status reports it.
type Memory struct {
	RSS  int64 // VmRSS: resident now, in bytes
	Peak int64 // VmHWM: the most it was ever resident, in bytes
}

// ReadMemory reads the resident set of process pid. The kernel keeps the
// high-water mark itself, so a peak between two samples is not missed.
func ReadMemory(pid int) (Memory, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("read memory of process %d: %w", pid, err)
	}
	var m Memory
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		name, value, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "VmRSS":
			dst = &m.RSS
		case "VmHWM":
			dst = &m.Peak
		default:
			continue
		}
		kib, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(value), []byte(" kB"))), 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("read memory of process %d: %s: %w", pid, name, err)
		}
		*dst = kib << 10
	}
	return m, nil
}
