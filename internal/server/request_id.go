package server

import (
	"crypto/rand"
	"log/slog"

	"github.com/labstack/echo/v4"
)

// maxRequestIDLength bounds the X-Request-Id a client may choose. The id
// goes into every log line of the request, its problem's instance and the
// audit events it writes, which are kept for a year: a client's 64 KB id
// would be kept as long.
const maxRequestIDLength = 128

// clientRequestIDKey is the Echo context key of a client's X-Request-Id
// that was not taken, for the request's log line.
const clientRequestIDKey = "client_request_id"

// requestIDs names every request: by the client's X-Request-Id when it is 1
// to maxRequestIDLength printable ASCII characters without spaces, so that a
// client can find its own requests in a report, else by a new random id.
// An id that was not taken is only logged, apart and cut short. The
// request's own header is replaced too, since Echo's request logger reads
// the id from there first.
func requestIDs(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		id := r.Header.Get(echo.HeaderXRequestID)
		if !validRequestID(id) {
			if id != "" {
				c.Set(clientRequestIDKey, bounded(id))
			}
			id = rand.Text()
		}
		r.Header.Set(echo.HeaderXRequestID, id)
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// appendClientRequestID adds to a request's log line the X-Request-Id its
// client sent when it was not taken.
func appendClientRequestID(c echo.Context, attrs []slog.Attr) []slog.Attr {
	if id, ok := c.Get(clientRequestIDKey).(string); ok {
		attrs = append(attrs, slog.String(clientRequestIDKey, id))
	}
	return attrs
}
