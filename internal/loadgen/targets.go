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

// judged is what the rows of one target measured over the rounds.
type judged struct {
	ingestTarget
	perRequest         int
	rounds, errors     int
	ratioLow, ratioTop float64
	p99Low, p99Top     float64
}

func (j judged) met() bool {
	return j.rounds > 0 && j.errors == 0 && j.ratioLow >= j.least && (j.maxP99 == 0 || j.p99Top < j.maxP99)
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
			ratio := r.MPS / floor
			if j.rounds == 0 {
				j.perRequest, j.ratioLow, j.ratioTop, j.p99Low, j.p99Top = per, ratio, ratio, r.P99, r.P99
			}
			j.rounds++
			j.errors += r.Errors
			j.ratioLow, j.ratioTop = min(j.ratioLow, ratio), max(j.ratioTop, ratio)
			j.p99Low, j.p99Top = min(j.p99Low, r.P99), max(j.p99Top, r.P99)
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
		if j.rounds == 0 {
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
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s |\n", what, j.rounds,
			span("%.2f", j.ratioLow, j.ratioTop), span("%.1f", j.p99Low, j.p99Top), threshold, verdict)
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
	type ratios struct {
		rounds                             int
		ownLow, ownTop, floorLow, floorTop float64
	}
	var lines []string
	for _, form := range []Form{FormPacket, FormX12, FormEDIFACT} {
		var got ratios
		for _, r := range rows {
			key := floorKey{r.Round, r.PerRequest, form}
			own, batch := floors[key], floors[floorKey{r.Round, r.PerRequest, FormBatch}]
			if r.Label != "" || r.Round == 0 || r.Mix != MixNew || r.form() != form || own == 0 || batch == 0 {
				continue
			}
			ratio, floorRatio := r.MPS/own, own/batch
			if got.rounds == 0 {
				got = ratios{ownLow: ratio, ownTop: ratio, floorLow: floorRatio, floorTop: floorRatio}
			}
			got.rounds++
			got.ownLow, got.ownTop = min(got.ownLow, ratio), max(got.ownTop, ratio)
			got.floorLow, got.floorTop = min(got.floorLow, floorRatio), max(got.floorTop, floorRatio)
		}
		if got.rounds > 0 {
			lines = append(lines, fmt.Sprintf("| %s | %d | %s | %s |", form, got.rounds,
				span("%.2f", got.ownLow, got.ownTop), span("%.2f", got.floorLow, got.floorTop)))
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

// span writes a range low–top, or one number when they are equal as
// written.
func span(format string, low, top float64) string {
	l, t := fmt.Sprintf(format, low), fmt.Sprintf(format, top)
	if l == t {
		return l
	}
	return l + "–" + t
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
