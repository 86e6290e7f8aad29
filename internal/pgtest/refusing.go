package pgtest

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// RefusingServerURL starts a stand-in PostgreSQL server that answers every
// connection attempt with a FATAL error of the given SQLSTATE, exactly as a
// real server refuses a connection it cannot take: 53300 (too many
// clients), 57P01 (shutting down), 57P03 (starting up or in recovery) or
// 55000 (the database does not allow connections). It returns a
// connection string for it; the server stops when the test ends.
func RefusingServerURL(t testing.TB, sqlstate string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue
			}
			go refuse(conn, sqlstate)
		}
	}()
	return fmt.Sprintf("postgres://postgres@%s/edihub?sslmode=disable&connect_timeout=5", ln.Addr())
}

func refuse(conn net.Conn, sqlstate string) {
	defer func() { _ = conn.Close() }()
	backend := pgproto3.NewBackend(conn, conn)
	if _, err := backend.ReceiveStartupMessage(); err != nil {
		return
	}
	backend.Send(&pgproto3.ErrorResponse{
		Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: sqlstate,
		Message: "connection refused by the test server",
	})
	_ = backend.Flush()
}
