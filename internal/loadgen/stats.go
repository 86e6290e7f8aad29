package loadgen

import (
	"slices"
	"time"
)

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest recorded latency that at least p percent
// of all requests did not exceed. Every latency is kept, so no histogram
// rounding enters the result.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted)) + 0.999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// summarise sorts latencies in place and fills r's latency fields.
func summarise(r *Result, latencies []time.Duration) {
	slices.Sort(latencies)
	r.P50 = ms(percentile(latencies, 50))
	r.P95 = ms(percentile(latencies, 95))
	r.P99 = ms(percentile(latencies, 99))
	if len(latencies) > 0 {
		r.Max = ms(latencies[len(latencies)-1])
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
