package loadgen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each target divides every round's edihub row by the floor row of the same
// round and size (the batch floor for every form of several messages), and
// is met only when every round reaches the threshold, within the latency
// target, without errors. A form's own floor is compared beside them.
func TestReportJudgesTheTargetsRoundByRound(t *testing.T) {
	t.Parallel()
	single := func(round int, label string, mix Mix, rate, p99 float64) Result {
		return Result{Label: label, Round: round, Mix: mix, Form: FormEnvelope, PerRequest: 1, Clients: 16, RPS: rate, MPS: rate, P99: p99}
	}
	multi := func(round int, label string, form Form, rate, p99 float64, errors int) Result {
		return Result{Label: label, Round: round, Mix: MixNew, Form: form, PerRequest: 100, Clients: 16,
			RPS: rate / 100, MPS: rate, P99: p99, Errors: errors}
	}
	rows := []Result{
		// Outside the rounds: neither counted nor a floor of theirs.
		single(0, "", MixNew, 100, 1),
		single(0, "floor", MixNew, 10000, 1),
		multi(0, "", FormBatch, 100, 1, 0),

		single(1, "", MixNew, 900, 5),
		single(1, "", MixDuplicate, 1100, 4),
		single(1, "", MixReplay, 950, 4),
		single(1, "floor", MixNew, 1000, 3),
		multi(1, "floor", FormBatch, 10000, 90, 0),
		multi(1, "", FormBatch, 8500, 200, 0),
		multi(1, "", FormPacket, 9000, 260, 0),
		multi(1, "", FormX12, 7000, 150, 0),
		// A form's own floor: beside the targets, never instead of the
		// batch floor.
		multi(1, "floor", FormX12, 8750, 100, 0),
		multi(1, "floor", FormPacket, 12000, 100, 0),

		multi(2, "floor", FormBatch, 8000, 80, 0),
		multi(2, "", FormBatch, 6800, 240, 0),
		multi(2, "", FormPacket, 7200, 100, 0),
		multi(2, "", FormX12, 7200, 120, 3),
		multi(2, "floor", FormX12, 8000, 100, 0),
		single(2, "floor", MixNew, 800, 3),
		single(2, "", MixNew, 760, 6),
		single(2, "", MixDuplicate, 800, 4.5),
		single(2, "", MixReplay, 840, 4),
	}
	var out strings.Builder
	require.NoError(t, Report{Rows: rows}.Write(&out))
	for _, want := range []string{
		"Targets at 16 clients",
		"| single new messages | 2 | 0.90–0.95 | 5.0–6.0 | ≥ 0.90 × the floor | met |",
		"| fingerprint duplicates | 2 | 1.00–1.10 | 4.0–4.5 | ≥ 1.00 × the floor | met |",
		"| Idempotency-Key replays | 2 | 0.95–1.05 | 4.0 | ≥ 1.00 × the floor | not met |",
		"| JSON batches of 100 | 2 | 0.85 | 200.0–240.0 | ≥ 0.80 × the batch floor, p99 < 250 ms | met |",
		"| IDoc-XML packets of 100 | 2 | 0.90 | 100.0–260.0 | ≥ 0.80 × the batch floor, p99 < 250 ms | not met |",
		"| X12 interchanges of 100 | 2 | 0.70–0.90 | 120.0–150.0 | ≥ 0.80 × the batch floor | not met: 3 errors |",
		"| EDIFACT interchanges | 0 | n/a | n/a | ≥ 0.80 × the batch floor | not measured |",
		"| form | rounds | edihub ÷ its form's floor | its form's floor ÷ the batch floor |",
		"| packet | 1 | 0.75 | 1.20 |",
		"| x12 | 2 | 0.80–0.90 | 0.88–1.00 |",
		// The rows' own tables compare them with their round's floor too.
		"| new, round 2 | 16 | 760 |",
		"| new, round 2 | batch | 100 | 16 | 68 | 6800 | 0.00 | 240.00 | 0 | n/a | n/a | n/a | n/a | 0.85 |",
	} {
		require.Contains(t, out.String(), want)
	}

	// Without rows in rounds there is no table of targets.
	out.Reset()
	require.NoError(t, Report{Rows: rows[:3]}.Write(&out))
	require.NotContains(t, out.String(), "Targets")
}
