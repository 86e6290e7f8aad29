package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

// conn is one client's keep-alive HTTP/1.1 connection to the server.
//
// The load generator shares the machine's cores with the server and
// PostgreSQL, so every microsecond of CPU it spends on a request is taken
// from what it measures; pgbench, which the rows are compared with, spends
// very little. net/http's client costs a request two goroutine hand-offs
// (a transport runs a reading and a writing goroutine per connection), a
// header map and a request object; a conn writes a request's head, built
// once per client, and its body in one system call, and reads the answer
// with net/http's own parser (http.ReadResponse), so that answers are
// understood exactly as net/http understands them, chunked ones included.
type conn struct {
	addr    string
	head    []byte // request line and headers, up to the Content-Length value
	timeout time.Duration
	nc      net.Conn
	br      *bufio.Reader
	stop    func() bool // ends the watch on the run's context
	scratch []byte      // the head of the request being sent
}

// requestTimeout bounds one request, from writing it to reading the whole
// answer, as the http.Client it replaces did.
const requestTimeout = time.Minute

// target is the server a run posts to, from its http:// base URL.
type target struct {
	addr string // host:port to dial
	host string // the Host header
	path string // the base URL's path, which request paths follow
}

// parseTarget reads base, an http:// URL of a host.
func parseTarget(base string) (target, error) {
	u, err := url.Parse(base)
	if err != nil {
		return target{}, fmt.Errorf("server URL: %w", err)
	}
	if u.Scheme != "http" || u.Host == "" {
		return target{}, fmt.Errorf("server URL %q: the load generator speaks plain http:// to a host", base)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return target{addr: addr, host: u.Host, path: u.EscapedPath()}, nil
}

// newConn returns a connection that posts to path on t with the given
// headers, in this order; it connects on the first request.
func newConn(t target, path string, headers [][2]string) *conn {
	head := fmt.Appendf(nil, "POST %s%s HTTP/1.1\r\nHost: %s\r\n", t.path, path, t.host)
	for _, h := range headers {
		head = fmt.Appendf(head, "%s: %s\r\n", h[0], h[1])
	}
	head = append(head, "Content-Length: "...)
	return &conn{addr: t.addr, head: head, timeout: requestTimeout}
}

// post sends body and returns the answer's status, at most limit bytes of
// its body, and its headers. After any failure, or an answer that ends the
// connection or is longer than limit, the connection is closed, and the
// next post connects again.
func (c *conn) post(ctx context.Context, body []byte, limit int64) (status int, answer []byte, header http.Header, err error) {
	if err := c.connect(ctx); err != nil {
		return 0, nil, nil, err
	}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	if err := c.nc.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, nil, nil, err
	}
	c.scratch = append(strconv.AppendInt(append(c.scratch[:0], c.head...), int64(len(body)), 10), "\r\n\r\n"...)
	bufs := net.Buffers{c.scratch, body}
	if _, err := bufs.WriteTo(c.nc); err != nil {
		return 0, nil, nil, fmt.Errorf("send request: %w", c.cause(ctx, err))
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read answer: %w", c.cause(ctx, err))
	}
	answer, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read answer: %w", c.cause(ctx, err))
	}
	if int64(len(answer)) > limit || resp.Close {
		// The rest of a long answer is not read, so the connection
		// cannot carry another request; nor can one the server ends.
		answer = answer[:min(int64(len(answer)), limit)]
		c.close()
	}
	return resp.StatusCode, answer, resp.Header, nil
}

// connect dials the server unless the connection is open. The run's
// context ending interrupts whatever the connection is doing.
func (c *conn) connect(ctx context.Context) error {
	if c.nc != nil {
		return nil
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	c.nc, c.br = nc, bufio.NewReaderSize(nc, 16<<10)
	c.stop = context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	return nil
}

// cause is ctx's error when the run's end interrupted the connection, else
// err.
func (c *conn) cause(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return ctx.Err()
	}
	return err
}

// close ends the connection; the next post connects again.
func (c *conn) close() {
	if c.nc == nil {
		return
	}
	c.stop()
	_ = c.nc.Close()
	c.nc, c.br = nil, nil
}
