package server

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
)

// Bounds on the admin pages that work on whole payloads (see heavyWork).
const (
	// heavyPerUser is how many such pages one user's requests prepare at
	// once: a page and a second tab, or the editor's preview while the
	// last one finishes.
	heavyPerUser = 2
	// heavyWait is how long a page waits for a place before it is refused,
	// as long as a sign-in waits for a password check: enough for the
	// pages ahead of it in the common case.
	heavyWait = 3 * time.Second
	// heavyRetryAfter is what a refused page is told to wait.
	heavyRetryAfter = 5 * time.Second
)

// heavyWork bounds the admin requests that work on whole payloads: a
// message's page, a blocked copy's page (its diff decodes both payloads)
// and the message-type editor's impact replay. Each holds a payload of up
// to MAX_BODY_BYTES several times over, or batches of 8 MiB of them, so a
// few dozen at once take gigabytes (docs/performance.md, "Measurements
// behind the limits").
// One user prepares at most heavyPerUser of them at once, and the process
// at most a few per core, since the work is CPU-bound and more at once
// would only interleave; a place is held until the answer is written, so
// that clients that do not read their answers hold places, not memory. A
// request that finds no place within heavyWait is refused: 429 when the
// user's own requests hold the places, 503 when other users' do.
type heavyWork struct {
	all   chan struct{}
	wait  time.Duration
	mu    sync.Mutex
	users map[int64]*userPlaces
}

// userPlaces are one user's places, shared by the requests that hold or
// wait for one; it is forgotten when none does.
type userPlaces struct {
	held    chan struct{}
	callers int
}

func newHeavyWork() *heavyWork {
	return &heavyWork{all: make(chan struct{}, 2*runtime.GOMAXPROCS(0)), wait: heavyWait, users: map[int64]*userPlaces{}}
}

// limit is the middleware of the heavy routes; it runs after requireUser.
func (h *heavyWork) limit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		release, err := h.enter(c.Request().Context(), currentUser(c).ID)
		if err != nil {
			return err
		}
		defer release()
		return next(c)
	}
}

var (
	errHeavyPerUser = &apperr.Error{
		Kind: apperr.TooManyRequests, Type: "too-many-large-pages", RetryAfter: heavyRetryAfter,
		Detail: "your other requests are preparing as many pages with whole payloads (message and blocked copy pages, the message-type editor's impact) as one user may at once: wait for them, then try again",
	}
	errHeavyBusy = &apperr.Error{
		Kind: apperr.Unavailable, Type: "server-busy", RetryAfter: heavyRetryAfter,
		Detail: "the server is preparing as many pages with whole payloads as it may at once: try again in a moment",
	}
)

// enter waits, within h.wait (heavyWait) and ctx, for a place of user and one of
// the process, and returns the function that gives them back.
func (h *heavyWork) enter(ctx context.Context, user int64) (release func(), err error) {
	places := h.join(user)
	wait, cancel := context.WithTimeout(ctx, h.wait)
	defer cancel()
	select {
	case places.held <- struct{}{}:
	case <-wait.Done():
		h.leave(user, places)
		return nil, refusal(ctx, errHeavyPerUser)
	}
	select {
	case h.all <- struct{}{}:
	case <-wait.Done():
		<-places.held
		h.leave(user, places)
		return nil, refusal(ctx, errHeavyBusy)
	}
	return func() {
		<-h.all
		<-places.held
		h.leave(user, places)
	}, nil
}

// refusal is why a wait for a place ended: the request's own end, or err.
func refusal(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (h *heavyWork) join(user int64) *userPlaces {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.users[user]
	if !ok {
		p = &userPlaces{held: make(chan struct{}, heavyPerUser)}
		h.users[user] = p
	}
	p.callers++
	return p
}

func (h *heavyWork) leave(user int64, p *userPlaces) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.callers--; p.callers == 0 {
		delete(h.users, user)
	}
}
