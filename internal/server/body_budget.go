package server

import (
	"github.com/labstack/echo/v4"
	"golang.org/x/sync/semaphore"

	"github.com/lefia/edihub/internal/metrics"
)

// bodyBudgetKey is the Echo context key of the request's share of the
// body budget, returned when the request has been answered.
const bodyBudgetKey = "edihub.body_budget"

// bodyBudget holds back API requests whose bodies would take the bytes in
// process past MAX_BODY_BYTES_IN_PROCESS. A body is held in memory several
// times over while it is parsed, hashed and sent to PostgreSQL, and
// the work is CPU-bound: sixteen 5 MiB posts read at once only interleave
// and multiply the peak, while a body that waits unread costs the server
// nothing (it stays in the sender's and the kernel's buffers).
type bodyBudget struct {
	bytes   *semaphore.Weighted
	limit   int64
	metrics *metrics.Metrics
}

func newBodyBudget(limit int64, m *metrics.Metrics) *bodyBudget {
	return &bodyBudget{bytes: semaphore.NewWeighted(limit), limit: limit, metrics: m}
}

// hold gives the group's requests a place for their share of the budget,
// and returns the share when the request has been answered.
func (b *bodyBudget) hold(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		var held int64
		c.Set(bodyBudgetKey, &held)
		defer func() {
			if held > 0 {
				b.bytes.Release(held)
				b.metrics.BodyBytesInProcess.Sub(float64(held))
			}
		}()
		return next(c)
	}
}

// take waits, within the request's time limit, until n more bytes fit in
// the budget (a body larger than the whole budget waits for all of it).
// Only the requests of a group that holds shares are limited.
func (b *bodyBudget) take(c echo.Context, n int64) error {
	held, ok := c.Get(bodyBudgetKey).(*int64)
	if !ok {
		return nil
	}
	n = min(n, b.limit)
	if !b.bytes.TryAcquire(n) {
		b.metrics.BodiesWaiting.Inc()
		err := b.bytes.Acquire(c.Request().Context(), n)
		b.metrics.BodiesWaiting.Dec()
		if err != nil {
			return err
		}
	}
	*held += n
	b.metrics.BodyBytesInProcess.Add(float64(n))
	return nil
}
