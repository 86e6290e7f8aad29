package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/labstack/echo/v4"
)

// BenchmarkRequestLogLine measures what the request log line costs one
// request: the same trivial route without the logger, and with it writing
// JSON or text lines to /dev/null (a write system call per line, as to a
// real stderr, without the disk). The difference is the line's cost.
func BenchmarkRequestLogLine(b *testing.B) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { devNull.Close() })
	for _, bc := range []struct {
		name   string
		logger *slog.Logger
	}{
		{"no-log", nil},
		{"json", slog.New(slog.NewJSONHandler(devNull, nil))},
		{"text", slog.New(slog.NewTextHandler(devNull, nil))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := echo.New()
			if bc.logger != nil {
				e.Use((&Server{log: bc.logger}).requestLogger())
			}
			e.POST("/api/edi-hub/receive-message", func(c echo.Context) error { return c.NoContent(http.StatusCreated) })
			req := httptest.NewRequest(http.MethodPost, "/api/edi-hub/receive-message", nil)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
			}
		})
	}
}
