package web

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/dashboard"
)

func TestRoundUp(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]int64{0: 1, 1: 1, 2: 2, 3: 5, 5: 5, 6: 10, 11: 20, 99: 100, 101: 200, 4999: 5000} {
		require.Equal(t, want, roundUp(n), n)
	}
}

// Bars stand on the zero line, their segments stacked in series order
// without gaps, and the tallest day reaches the axis' top when its total
// is a round number.
func TestLayoutChart(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	d := dashboard.Dashboard{
		Series: []dashboard.Type{{Tenant: "acme", Code: "ORDERS05"}, {Tenant: "acme", Code: "INVOIC02"}},
		Days: []dashboard.Day{
			{Date: day, Counts: []int64{0, 0}},
			{Date: day.AddDate(0, 0, 1), Counts: []int64{3, 2}, Total: 5},
			{Date: day.AddDate(0, 0, 2), Counts: []int64{0, 1}, Total: 1},
		},
	}
	c := layoutChart(d, false)
	require.Equal(t, []chartTick{{Y: "216.0", Label: "0"}, {Y: "10.0", Label: "5"}}, c.Ticks, "5 has no whole half")
	require.Equal(t, "216.0", c.Base)
	require.Len(t, c.Bars, 3)
	require.Empty(t, c.Bars[0].Segments)
	require.Equal(t, "03-11", c.Bars[1].Label)

	full := c.Bars[1].Segments
	require.Len(t, full, 2)
	require.Equal(t, chartSegment{Y: "92.4", Height: "123.6", Class: "series-0", Title: "2026-03-11, ORDERS05: 3 blocked"}, full[0])
	require.Equal(t, chartSegment{Y: "10.0", Height: "82.4", Class: "series-1", Title: "2026-03-11, INVOIC02: 2 blocked"}, full[1])
	require.Equal(t, "series-1", c.Bars[2].Segments[0].Class, "a series keeps its colour on every day")
	require.Equal(t, 216.0, parse(t, full[0].Y)+parse(t, full[0].Height), "the first segment stands on the zero line")
	require.Equal(t, parse(t, full[0].Y), parse(t, full[1].Y)+parse(t, full[1].Height), "the second stands on the first")
	require.Equal(t, "series-0", seriesClass(seriesColours), "colours repeat")
}

func parse(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	return f
}
