package loadgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Pgbench is one pgbench run of the same insert, as scripts/bench.sh records
// it: of one row a transaction, or of Rows rows in one statement.
type Pgbench struct {
	Clients int `json:"clients"`
	Rows    int `json:"rows,omitempty"` // 0: one row
	// Beside is the number (1 for the first) of the load row this run
	// measured right after, at the row's client count, so that the two
	// see the machine at the same speed; 0 for a run of its own.
	Beside     int     `json:"beside,omitempty"`
	TPS        float64 `json:"tps"`
	LatencyAvg float64 `json:"latency_avg_ms"`
	Failed     int     `json:"failed"`
}

// Report is everything one `make bench` measured.
type Report struct {
	Rows    []Result  // the load rows, in the order they ran
	Pgbench []Pgbench // the limits: one per client count, and per rows a statement
	Memory  *Result   // the large-payload memory check, if it ran
}

// ReadJSONLines decodes a file of one JSON value per line into values of
// type T.
func ReadJSONLines[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// Write prints the report as Markdown: the targets, when rows ran in rounds
// beside the floor (see writeTargets); one table row per load row of
// single envelopes with the pgbench rate at the same client count and the
// ratio of the two; then the rows of batches and packets, in messages per
// second against the same rate; then the memory figures.
func (rep Report) Write(w io.Writer) error {
	type run struct{ clients, rows int }
	limit := map[run]float64{}  // rows stored a second
	beside := map[int]float64{} // the single-row rate measured right after row i
	for _, p := range rep.Pgbench {
		rows := max(p.Rows, 1)
		if p.Beside > 0 && rows == 1 {
			beside[p.Beside-1] = p.TPS
			continue
		}
		limit[run{p.Clients, rows}] = p.TPS * float64(rows)
	}
	// against is pgbench's rate for row i storing rows rows a statement
	// (the one measured beside it, if any, else the one at its client
	// count), and rate's ratio to it.
	against := func(i, rows int, rate float64) (limitRate, ratio string) {
		pg := limit[run{rep.Rows[i].Clients, rows}]
		if paired, ok := beside[i]; ok && rows == 1 {
			pg = paired
		}
		if pg > 0 {
			return fmt.Sprintf("%.0f", pg), fmt.Sprintf("%.2f", rate/pg)
		}
		return "n/a", "n/a"
	}
	var envelopes, multi []int
	for i, r := range rep.Rows {
		if r.form() == FormEnvelope {
			envelopes = append(envelopes, i)
		} else {
			multi = append(multi, i)
		}
	}
	// The floor's messages/s for each round and batch size: the bare
	// service storing a batch with one statement, measured in the same run.
	floors := floorRates(rep.Rows)
	bw := bufio.NewWriter(w)
	if c := roundClients(rep.Rows); c > 0 {
		writeTargets(bw, rep.Rows, c)
		writeFormFloors(bw, rep.Rows)
	}
	fmt.Fprintln(bw, "| mix | clients | edihub req/s | p50 ms | p95 ms | p99 ms | errors | pgbench tps | edihub / pgbench | CPU µs a message: edihub / PostgreSQL / load | server RSS (max sampled) |")
	fmt.Fprintln(bw, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	var peak int64
	for _, i := range envelopes {
		r := rep.Rows[i]
		tps, ratio := against(i, 1, r.RPS)
		fmt.Fprintf(bw, "| %s | %d | %.0f | %.2f | %.2f | %.2f | %d | %s | %s | %s | %s |\n",
			r.name(), r.Clients, r.RPS, r.P50, r.P95, r.P99, r.Errors, tps, ratio, r.cpuSplit(), mib(r.ServerRSS))
		peak = max(peak, r.ServerPeak)
	}
	fmt.Fprintln(bw)
	if len(multi) > 0 {
		fmt.Fprintln(bw, "| mix | form | messages per request | clients | requests/s | messages/s | p50 ms | p99 ms | errors | pgbench tps | messages/s / pgbench | pgbench rows/s, as many a statement | messages/s / that | messages/s / batch floor | CPU µs a message: edihub / PostgreSQL / load | server RSS (max sampled) |")
		fmt.Fprintln(bw, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, i := range multi {
			r := rep.Rows[i]
			tps, ratio := against(i, 1, r.MPS)
			rowsRate, rowsRatio := against(i, max(r.PerRequest, 1), r.MPS)
			floorRatio := "n/a"
			if f := floors[floorKey{r.Round, r.PerRequest, FormBatch}]; f > 0 && r.PerRequest > 1 {
				floorRatio = fmt.Sprintf("%.2f", r.MPS/f)
			}
			fmt.Fprintf(bw, "| %s | %s | %d | %d | %.0f | %.0f | %.2f | %.2f | %d | %s | %s | %s | %s | %s | %s | %s |\n",
				r.name(), r.Form, r.PerRequest, r.Clients, r.RPS, r.MPS, r.P50, r.P99, r.Errors, tps, ratio, rowsRate, rowsRatio, floorRatio, r.cpuSplit(), mib(r.ServerRSS))
			peak = max(peak, r.ServerPeak)
		}
		fmt.Fprintln(bw)
	}
	if len(beside) > 0 {
		fmt.Fprintln(bw, "pgbench tps: its single-row insert run right after each row, at the row's client count.")
		fmt.Fprintln(bw)
	}
	if peak > 0 {
		fmt.Fprintf(bw, "Server peak RSS (VmHWM) over these rows: %s.\n", mib(peak))
	}
	if m := rep.Memory; m != nil {
		fmt.Fprintf(bw, "\nLarge payloads: %d clients × %d requests of %s each (%s in flight): "+
			"peak RSS %s = %.2f × the bytes in flight; %.1f req/s, p50 %.0f ms, p99 %.0f ms, %d errors.\n",
			m.Clients, m.Requests/max(m.Clients, 1), mib(int64(m.BodyBytes)), mib(m.InFlightSize),
			mib(m.ServerPeak), float64(m.ServerPeak)/float64(max(m.InFlightSize, 1)), m.RPS, m.P50, m.P99, m.Errors)
	}
	for _, r := range append(rep.Rows, derefAll(rep.Memory)...) {
		if r.FirstError != "" {
			fmt.Fprintf(bw, "\nFirst error of %s %s×%d c=%d: %s\n", r.Mix, r.Form, r.PerRequest, r.Clients, r.FirstError)
		}
	}
	return bw.Flush()
}

// name is what the report calls the row: its mix, the server measured
// when that was not edihub, and its round of the comparison with the floor.
func (r Result) name() string {
	name := string(r.Mix)
	if r.Label != "" {
		name += ", " + r.Label
	}
	if r.Round > 0 {
		name += fmt.Sprintf(", round %d", r.Round)
	}
	return name
}

// cpuSplit is the row's CPU per message: the server's, PostgreSQL's and
// the load generator's.
func (r Result) cpuSplit() string {
	if r.ServerCPU == 0 && r.PostgresCPU == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f / %.0f / %.0f", r.ServerCPU, r.PostgresCPU, r.LoadCPU)
}

func derefAll(r *Result) []Result {
	if r == nil {
		return nil
	}
	return []Result{*r}
}

func mib(b int64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
