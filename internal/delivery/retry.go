package delivery

import (
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/lefia/edihub/internal/backoff"
)

// maxRetryWait caps the wait between two attempts, so that a destination
// that comes back after a long outage is tried again within hours.
const maxRetryWait = 6 * time.Hour

// retryPolicy waits base after the first failed attempt and doubles the
// wait after each further one, up to maxRetryWait, with jitter
// (backoff.Jittered).
type retryPolicy struct {
	base time.Duration
}

// NextRetry implements river.ClientRetryPolicy.
func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(backoff.Jittered(p.base, maxRetryWait, job.Attempt))
}
