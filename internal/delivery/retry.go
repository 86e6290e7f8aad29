package delivery

import (
	"math/rand/v2"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// maxRetryWait caps the wait between two attempts, so that a destination
// that comes back after a long outage is tried again within hours.
const maxRetryWait = 6 * time.Hour

// retryPolicy waits base after the first failed attempt and doubles the
// wait after each further one, up to maxRetryWait. The wait actually used
// is drawn between half and all of it, so that deliveries that failed
// together (a destination's outage) do not all come back at once.
type retryPolicy struct {
	base time.Duration
}

// NextRetry implements river.ClientRetryPolicy.
func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(p.wait(job.Attempt))
}

func (p retryPolicy) wait(attempt int) time.Duration {
	wait := maxRetryWait
	if shift := attempt - 1; shift < 30 {
		if w := p.base << max(shift, 0); w > 0 && w < maxRetryWait {
			wait = w
		}
	}
	half := wait / 2
	return half + rand.N(wait-half+1)
}
