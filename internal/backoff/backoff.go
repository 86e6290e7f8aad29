// Package backoff is how long edihub waits before trying a failed send
// again: deliveries to destinations and notifications to channels alike.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Jittered is the wait after a send's attempt-th failed attempt (from 1):
// base after the first, doubled after each further one, up to ceiling. The
// wait returned is drawn between half and all of that, so that sends that
// failed together (a receiver's outage) do not all come back at once.
func Jittered(base, ceiling time.Duration, attempt int) time.Duration {
	wait := ceiling
	if shift := attempt - 1; shift < 30 {
		if w := base << max(shift, 0); w > 0 && w < ceiling {
			wait = w
		}
	}
	half := wait / 2
	return half + rand.N(wait-half+1)
}
