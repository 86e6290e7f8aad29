package typeeditor

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/fingerprint"
)

// order is a small payload with an order number and a message type.
func order(belnr, mestyp string) []byte {
	return fmt.Appendf(nil, `{"IDOC":{"EDI_DC40":{"MESTYP":%q},"E1EDK01":{"BELNR":%q}}}`, mestyp, belnr)
}

func TestReplayDecidesAsIngest(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	at := func(hours float64) time.Time { return t0.Add(time.Duration(hours * float64(time.Hour))) }
	// Currently the docnum alone decides, with the default window; the
	// proposal reads the order number and the message type, with 24 hours.
	a := newAnalysis(9, nil, 168, []string{"IDOC.EDI_DC40.MESTYP", "IDOC.E1EDK01.BELNR"}, 24)
	for _, m := range []sampled{
		{environment: 1, docnum: "1", receivedAt: at(0), payload: order("4500000001", "ORDERS")},
		// A repeat output: new DOCNUM, same order. Newly blocked.
		{environment: 1, docnum: "2", receivedAt: at(1), payload: order("4500000001", "ORDERS")},
		// The change of that order is another message under both.
		{environment: 1, docnum: "3", receivedAt: at(2), payload: order("4500000001", "ORDCHG")},
		// The same order in another environment is never a duplicate.
		{environment: 2, docnum: "4", receivedAt: at(3), payload: order("4500000001", "ORDERS")},
		// Exactly the window after the first: it no longer blocks, and this
		// one takes the fingerprint over...
		{environment: 1, docnum: "5", receivedAt: at(24), payload: order("4500000001", "ORDERS")},
		// ...so that a repeat an hour later is blocked by it.
		{environment: 1, docnum: "6", receivedAt: at(25), payload: order("4500000001", "ORDERS")},
		// A retransmission with the first one's DOCNUM but no order
		// number: the current settings block it; the proposal falls back
		// to the docnum, which no earlier fingerprint of its own was made
		// of, and lets it through.
		{environment: 1, docnum: "1", receivedAt: at(26), payload: []byte(`{}`)},
		// Without any value or docnum there is no fingerprint.
		{environment: 1, receivedAt: at(27), payload: []byte(`{}`)},
		// An Idempotency-Key replaces the fingerprint check.
		{environment: 1, docnum: "8", receivedAt: at(28), keyed: true, payload: order("4500000001", "ORDERS")},
		// A number beyond a double cannot be canonicalised: refused under
		// the proposal, which reads it; the current settings never look.
		{environment: 1, docnum: "9", receivedAt: at(29), payload: []byte(`{"IDOC":{"E1EDK01":{"BELNR":1e999}}}`)},
	} {
		a.add(m)
	}
	im := a.result()
	require.Equal(t, 10, im.Messages)
	require.Equal(t, t0, im.From)
	require.Equal(t, at(29), im.To)
	require.Equal(t, 1, im.Keyed)
	require.Equal(t, Outcome{WindowHours: 168, Duplicates: 1, FromDocnum: 9, NoFingerprint: 1}, im.Current, "current")
	require.Equal(t, Outcome{WindowHours: 24, Duplicates: 2, FromDocnum: 1, NoFingerprint: 1, Refused: 1}, im.Proposed, "proposed")
	require.Equal(t, 2, im.NewlyBlocked, "the repeat output and the repeat after the window")
	require.Equal(t, 1, im.NoLongerBlocked, "the bare retransmission")
	require.Equal(t, []PathShare{
		{Path: "IDOC.EDI_DC40.MESTYP", Matched: 7, Of: 9, Value: `"ORDERS"`, Varies: true},
		{Path: "IDOC.E1EDK01.BELNR", Matched: 7, Of: 9, Value: `"4500000001"`},
	}, im.Paths, "shares of the messages whose values could be read")
	require.Equal(t, []PathShare{im.Paths[1]}, im.Constant(), "one order number throughout")
	require.Equal(t, []Fallback{
		{Docnum: "1", Kind: fingerprint.FallbackAllMissing, Values: []fingerprint.Value{
			{Path: "IDOC.EDI_DC40.MESTYP", JSON: "null", Missing: true},
			{Path: "IDOC.E1EDK01.BELNR", JSON: "null", Missing: true},
		}},
		{Kind: fingerprint.FallbackNoDocnum, Values: []fingerprint.Value{
			{Path: "IDOC.EDI_DC40.MESTYP", JSON: "null", Missing: true},
			{Path: "IDOC.E1EDK01.BELNR", JSON: "null", Missing: true},
		}},
	}, im.FromDocnum, "the two messages without values, and why")
}

// A path that reads the same value in every message adds nothing, and the
// messages that fell back to the docnum are listed, the most recent
// MaxFallbacksListed of them, with what each path read.
func TestReplayNamesConstantPathsAndFallbacks(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	a := newAnalysis(9, nil, 168, []string{"IDOC.EDI_DC40.MESTYP", "items.#.sku"}, 168)
	for i := range MaxFallbacksListed + 5 {
		a.add(sampled{id: int64(i + 1), environment: 1, docnum: fmt.Sprint(i + 1), receivedAt: t0.Add(time.Duration(i) * time.Minute),
			payload: fmt.Appendf(nil, `{"IDOC":{"EDI_DC40":{"MESTYP":"INVOIC"}},"items":[{"n":%d}]}`, i)})
	}
	im := a.result()
	require.Equal(t, []PathShare{{Path: "IDOC.EDI_DC40.MESTYP", Matched: 25, Of: 25, Value: `"INVOIC"`}}, im.Constant())
	require.Equal(t, []PathShare{{Path: "items.#.sku", Of: 25}}, im.Unmatched())
	require.Empty(t, im.FromDocnum, "the constant beside the missing value decides: nothing falls back")
	require.Equal(t, 24, im.Proposed.Duplicates, "which makes every invoice after the first its duplicate")

	a = newAnalysis(9, nil, 168, []string{"items.#.sku"}, 168)
	for i := range MaxFallbacksListed + 5 {
		a.add(sampled{id: int64(i + 1), environment: 1, docnum: fmt.Sprint(i + 1), receivedAt: t0.Add(time.Duration(i) * time.Minute),
			payload: fmt.Appendf(nil, `{"items":[{"n":%d}]}`, i)})
	}
	im = a.result()
	require.Zero(t, im.Proposed.Duplicates, "without the constant each falls back to its own docnum")
	require.Len(t, im.FromDocnum, MaxFallbacksListed)
	first := im.FromDocnum[0]
	require.Equal(t, int64(6), first.MessageID, "the most recent are kept")
	require.Equal(t, "6", first.Docnum)
	require.Equal(t, fingerprint.FallbackAllMissing, first.Kind)
	require.Equal(t, []fingerprint.Value{{Path: "items.#.sku", JSON: "null", Missing: true, Found: "[]"}}, first.Values)
	require.Equal(t, int64(25), im.FromDocnum[MaxFallbacksListed-1].MessageID)
}

func TestReplayReportsWhatAChangeLetsThrough(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	a := newAnalysis(9, []string{"IDOC.E1EDK01.BELNR"}, 168, []string{"IDOC.E1EDK01.BELNR"}, 1)
	a.add(sampled{environment: 1, docnum: "1", receivedAt: t0, payload: order("1", "ORDERS")})
	a.add(sampled{environment: 1, docnum: "2", receivedAt: t0.Add(2 * time.Hour), payload: order("1", "ORDERS")})
	im := a.result()
	require.Equal(t, 1, im.Current.Duplicates, "inside a week")
	require.Equal(t, 0, im.Proposed.Duplicates, "outside an hour")
	require.Equal(t, 1, im.NoLongerBlocked)
	require.Equal(t, 0, im.NewlyBlocked)
}

func TestReplayOfNothing(t *testing.T) {
	t.Parallel()
	im := newAnalysis(9, nil, 168, []string{"id"}, 48).result()
	require.Zero(t, im.Messages)
	require.Equal(t, int32(168), im.Current.WindowHours)
	require.Equal(t, int32(48), im.Proposed.WindowHours)
	require.Equal(t, []PathShare{{Path: "id"}}, im.Paths)
}

func TestBatchesBoundThePayloadBytes(t *testing.T) {
	t.Parallel()
	rows := func(sizes ...int64) []db.MessageListOfTypeRow {
		r := make([]db.MessageListOfTypeRow, len(sizes))
		for i, s := range sizes {
			r[i] = db.MessageListOfTypeRow{ID: int64(i), PayloadBytes: s}
		}
		return r
	}
	sizes := func(in []db.MessageListOfTypeRow) [][]int64 {
		var out [][]int64
		for b := range batches(in, 10) {
			var s []int64
			for _, r := range b {
				s = append(s, r.PayloadBytes)
			}
			out = append(out, s)
		}
		return out
	}
	require.Equal(t, [][]int64{{4, 6}, {3, 3, 3}, {25}, {1}}, sizes(rows(4, 6, 3, 3, 3, 25, 1)),
		"a payload larger than the limit comes alone")
	require.Nil(t, sizes(nil))
	// A consumer that stops early gets no more batches.
	n := 0
	for range batches(rows(9, 9, 9), 10) {
		n++
		break
	}
	require.Equal(t, 1, n)
	require.Equal(t, [][]int64{{10}}, sizes(rows(10)))
}

// A path that read nothing in any message is listed as unmatched; one that
// was never read (every message refused) is not, as there is no evidence.
func TestUnmatchedPaths(t *testing.T) {
	t.Parallel()
	a := newAnalysis(9, nil, 168, []string{"IDOC.E1EDK01.BELNR", "IDOC.E1EDK01.BELNRX"}, 168)
	a.add(sampled{environment: 1, docnum: "1", receivedAt: time.Now(), payload: order("4500000001", "ORDERS")})
	require.Equal(t, []PathShare{{Path: "IDOC.E1EDK01.BELNRX", Matched: 0, Of: 1}}, a.result().Unmatched())
	require.Empty(t, a.result().Constant(), "one message cannot show a constant")
	require.Empty(t, Impact{Paths: []PathShare{{Path: "x"}}}.Unmatched(), "no message read")
}

func TestSavedComparesWithTheStoredSettings(t *testing.T) {
	t.Parallel()
	hours48, hours168 := int32(48), int32(168)
	ints := func(n int) *int { return &n }
	stored := Type{Paths: []string{"a", "b"}, WindowHours: &hours48}
	require.True(t, stored.Saved(Proposal{Paths: []string{"a", "b"}, WindowHours: ints(48)}))
	require.False(t, stored.Saved(Proposal{Paths: []string{"b", "a"}, WindowHours: ints(48)}), "the order is part of the fingerprint")
	require.False(t, stored.Saved(Proposal{Paths: []string{"a", "b"}, WindowHours: ints(24)}))
	require.False(t, stored.Saved(Proposal{Paths: []string{"a", "b"}}), "the default replaces 48")
	require.True(t, Type{}.Saved(Proposal{Paths: []string{}}), "no paths stored and none proposed")
	require.False(t, Type{}.Saved(Proposal{Paths: []string{}, WindowHours: ints(168)}), "an explicit 168 would be stored")
	require.True(t, Type{WindowHours: &hours168}.Saved(Proposal{Paths: []string{}, WindowHours: ints(168)}))
}
