package loadgen

import (
	"fmt"
	"io"
	"slices"
)

// ingestTarget is one of the ingest targets that `make bench` judges
// (docs/performance.md, "Targets"): edihub's rows of one mix and form,
// each divided by the floor's row of the same round, must reach least;
// with maxP99, every row's p99 must stay below it.
type ingestTarget struct {
	what   string
	mix    Mix
	form   Form // FormEnvelope: against the floor of single messages; else the batch floor
	least  float64
	maxP99 float64 // ms; 0: no latency target
}

// targets are measured at the bench's batch client count; the forms of
// several messages at the size the batch floor ran in the round.
var targets = []ingestTarget{
	{what: "single new messages", mix: MixNew, form: FormEnvelope, least: 0.9},
	{what: "fingerprint duplicates", mix: MixDuplicate, form: FormEnvelope, least: 1.0},
	{what: "Idempotency-Key replays", mix: MixReplay, form: FormEnvelope, least: 1.0},
	{what: "JSON batches", mix: MixNew, form: FormBatch, least: 0.8, maxP99: 250},
	{what: "IDoc-XML packets", mix: MixNew, form: FormPacket, least: 0.8, maxP99: 250},
	{what: "X12 interchanges", mix: MixNew, form: FormX12, least: 0.8},
	{what: "EDIFACT interchanges", mix: MixNew, form: FormEDIFACT, least: 0.8},
}

// against is the form of the floor the target's rows are divided by: the
// floor of single messages, or the batch floor.
func (t ingestTarget) against() Form {
	if t.form == FormEnvelope {
		return FormEnvelope
	}
	return FormBatch
}

// floorKey finds a floor row: the round it ran in, the messages each of
// its requests carried (1 for the floor of single messages) and their form.
type floorKey struct {
	round, perRequest int
	form              Form
}

// floorRates are the floor rows' messages per second, by round, size and
// form.
func floorRates(rows []Result) map[floorKey]float64 {
	rates := map[floorKey]float64{}
	for _, r := range rows {
		if r.Label == "floor" {
			rates[floorKey{r.Round, max(r.PerRequest, 1), r.form()}] = r.MPS
		}
	}
	return rates
}

// extent is the lowest and the highest of the values a row of the report
// measured over the rounds, and how many rounds it measured.
type extent struct {
	rounds   int
	low, top float64
}

func (e *extent) add(v float64) {
	if e.rounds == 0 {
		e.low, e.top = v, v
	}
	e.rounds++
	e.low, e.top = min(e.low, v), max(e.top, v)
}

// format writes the extent low–top, or one number when they are equal as
// written.
func (e extent) format(verb string) string {
	l, t := fmt.Sprintf(verb, e.low), fmt.Sprintf(verb, e.top)
	if l == t {
		return l
	}
	return l + "–" + t
}

// judged is what the rows of one target measured over the rounds.
type judged struct {
	ingestTarget
	perRequest int
	errors     int
	ratio, p99 extent
}

func (j judged) met() bool {
	return j.ratio.rounds > 0 && j.errors == 0 && j.ratio.low >= j.least && (j.maxP99 == 0 || j.p99.top < j.maxP99)
}

// judge collects each target's edihub rows that ran in a round with a
// floor row of their size beside them.
func judge(rows []Result) []judged {
	floors := floorRates(rows)
	out := make([]judged, len(targets))
	for i, t := range targets {
		j := judged{ingestTarget: t}
		for _, r := range rows {
			per := max(r.PerRequest, 1)
			form := r.form()
			floor := floors[floorKey{r.Round, per, t.against()}]
			if r.Label != "" || r.Round == 0 || r.Mix != t.mix || form != t.form || floor == 0 ||
				(form != FormEnvelope && per == 1) {
				continue
			}
			if j.ratio.rounds == 0 {
				j.perRequest = per
			}
			j.errors += r.Errors
			j.ratio.add(r.MPS / floor)
			j.p99.add(r.P99)
		}
		out[i] = j
	}
	return out
}

// form is the row's form, rows written before forms were recorded being
// envelopes.
func (r Result) form() Form {
	if r.Form == "" {
		return FormEnvelope
	}
	return r.Form
}

// writeTargets prints the table of targets: for each, the range of its
// rows' ratio to the floor over the rounds, their p99, the threshold and
// whether every round met it.
func writeTargets(w io.Writer, rows []Result, clients int) {
	fmt.Fprintf(w, "Targets at %d clients, each row divided by the floor's row of its round (rounds alternate which runs first):\n\n", clients)
	fmt.Fprintln(w, "| target | rounds | edihub ÷ floor | p99 ms | threshold | verdict |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|")
	for _, j := range judge(rows) {
		what, against := j.what, "the floor"
		if j.form != FormEnvelope {
			against = "the batch floor"
			if j.perRequest > 0 {
				what = fmt.Sprintf("%s of %d", what, j.perRequest)
			}
		}
		threshold := fmt.Sprintf("≥ %.2f × %s", j.least, against)
		if j.maxP99 > 0 {
			threshold += fmt.Sprintf(", p99 < %.0f ms", j.maxP99)
		}
		if j.ratio.rounds == 0 {
			fmt.Fprintf(w, "| %s | 0 | n/a | n/a | %s | not measured |\n", what, threshold)
			continue
		}
		verdict := "met"
		switch {
		case j.errors > 0:
			verdict = fmt.Sprintf("not met: %d errors", j.errors)
		case !j.met():
			verdict = "not met"
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s |\n", what, j.ratio.rounds,
			j.ratio.format("%.2f"), j.p99.format("%.1f"), threshold, verdict)
	}
	fmt.Fprintln(w)
}

// writeFormFloors prints, for each form that edihub reads with a parser
// of its own, its rows' ratio to the floor that reads the same requests
// with that parser and stores their messages with one statement, and that
// floor's ratio to the batch floor: how much of a form's distance from the
// batch floor is its reading, and how much edihub's work beyond it. The
// targets stay against the batch floor.
func writeFormFloors(w io.Writer, rows []Result) {
	floors := floorRates(rows)
	var lines []string
	for _, form := range []Form{FormPacket, FormX12, FormEDIFACT} {
		var own, floor extent // edihub ÷ its form's floor; that floor ÷ the batch floor
		for _, r := range rows {
			formFloor := floors[floorKey{r.Round, r.PerRequest, form}]
			batchFloor := floors[floorKey{r.Round, r.PerRequest, FormBatch}]
			if r.Label != "" || r.Round == 0 || r.Mix != MixNew || r.form() != form || formFloor == 0 || batchFloor == 0 {
				continue
			}
			own.add(r.MPS / formFloor)
			floor.add(formFloor / batchFloor)
		}
		if own.rounds > 0 {
			lines = append(lines, fmt.Sprintf("| %s | %d | %s | %s |", form, own.rounds, own.format("%.2f"), floor.format("%.2f")))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "Beside the floor of their own form (the requests read with edihub's parser, their messages stored with one statement), by round:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| form | rounds | edihub ÷ its form's floor | its form's floor ÷ the batch floor |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
}

// roundClients is the client count of the rows that ran in rounds, 0 when
// none did.
func roundClients(rows []Result) int {
	i := slices.IndexFunc(rows, func(r Result) bool { return r.Round > 0 })
	if i < 0 {
		return 0
	}
	return rows[i].Clients
}
