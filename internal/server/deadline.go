package server

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
)

// timeLimitKey is the Echo context key of the request's time limit, which
// the answer to a request that ran past it names.
const timeLimitKey = "edihub.time_limit"

// timeLimit bounds the work of every request of a group: its context ends
// after limit, which cancels the running statement and rolls its
// transaction back. An error that follows from the deadline, or from the
// client going away, is reported as that (see interrupted), never as an
// unavailable database: telling a sender to retry work that ran out of
// time only sends the same work again.
func timeLimit(limit time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx, cancel := context.WithTimeout(c.Request().Context(), limit)
			defer cancel()
			c.SetRequest(c.Request().WithContext(ctx))
			c.Set(timeLimitKey, limit)
			err := interrupted(c, next(c))
			// The answer to an error is written after this returns, and
			// templ writes nothing under an ended context: the error page
			// gets the request's values without its deadline.
			c.SetRequest(c.Request().WithContext(context.WithoutCancel(c.Request().Context())))
			return err
		}
	}
}

// interrupted tells a request stopped from outside from one that failed on
// its own: when the request's context has ended, err is what the deadline
// or the departed client caused, whatever form the driver gave it (a
// cancelled statement, a broken connection, a failed acquire). A
// user-facing error the handler decided on before that keeps its answer.
// Applying it twice changes nothing, so the ingest observer and the time
// limit can both use it.
func interrupted(c echo.Context, err error) error {
	if err == nil {
		return nil
	}
	if ae, ok := apperr.As(err); ok && ae.Kind != apperr.Unavailable {
		return err
	}
	switch c.Request().Context().Err() {
	case context.DeadlineExceeded:
		limit, _ := c.Get(timeLimitKey).(time.Duration)
		return &apperr.Error{
			Kind: apperr.Timeout, Type: "request-timeout", Err: err,
			Detail: "the request ran past the time limit of " + limit.String() + " and was stopped; its work was rolled back",
		}
	case context.Canceled:
		return &apperr.Error{
			Kind: apperr.ClientClosed, Type: "client-closed-request", Err: err,
			Detail: "the client closed the connection before the answer; the work was rolled back",
		}
	}
	return err
}
