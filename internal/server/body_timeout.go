package server

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
)

// idleBody reads a request body with a bound on each read: a read that
// brings nothing for idle fails. A sender that opens an upload and then
// pauses holds a connection, a goroutine and whatever share of the body
// budget its bytes took; without the bound it would hold them until the
// request's time limit. Time spent waiting for room in the budget is not
// the sender's pause: the bound starts again with every read.
type idleBody struct {
	r    io.Reader
	rc   *http.ResponseController
	idle time.Duration
	// end is the request's own deadline, which no read passes.
	end time.Time
	// late is set once a read failed at its deadline, paused once that
	// deadline was the pause's rather than the request's.
	late, paused bool
}

func newIdleBody(c echo.Context, r io.Reader, idle time.Duration) *idleBody {
	end, _ := c.Request().Context().Deadline()
	return &idleBody{r: r, rc: http.NewResponseController(c.Response()), idle: idle, end: end}
}

func (b *idleBody) Read(p []byte) (int, error) {
	deadline := time.Now().Add(b.idle)
	byIdle := b.end.IsZero() || deadline.Before(b.end)
	if !byIdle {
		deadline = b.end
	}
	if err := b.rc.SetReadDeadline(deadline); err != nil {
		// A connection without deadlines (a test's recorder) reads as before.
		return b.r.Read(p)
	}
	n, err := b.r.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		b.late, b.paused = true, byIdle
	}
	return n, err
}

// done lifts the deadline once the body is read. The server keeps reading
// the connection in the background to notice a client that leaves, and a
// timeout there would cancel the request, which is still at work and
// bounded by its own time limit: it would be reported as left by its
// client rather than as timed out. A body that came too late keeps its
// passed deadline: the server would otherwise wait for the rest of it, to
// reuse the connection, before sending the answer; it closes the
// connection instead.
func (b *idleBody) done() {
	if !b.late {
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}

// problem is what a read that failed with err tells the sender, or nil
// when err is not about time.
func (b *idleBody) problem(err error) error {
	switch {
	case b.paused:
		return apperr.New(apperr.ClientTimeout, "request-body-timeout",
			"no bytes of the body arrived for %s (REQUEST_BODY_IDLE_TIMEOUT), so the request was stopped; send the body without pausing", b.idle)
	case b.late:
		return apperr.New(apperr.ClientTimeout, "request-body-timeout",
			"the body did not arrive within the request's time limit, so the request was stopped")
	}
	return nil
}
