package main_test

import (
	"bufio"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
)

// buildBinary compiles edihub once for the tests of this file.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "edihub")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// The real binary: exit codes for bad command lines and failures, and a
// clean exit 0 after SIGTERM.
func TestBinary(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	url := pgtest.URL(t)

	exitCode := func(args ...string) int {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+url)
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		require.NoError(t, err)
		return 0
	}
	require.Equal(t, 2, exitCode("frobnicate"))
	require.Equal(t, 2, exitCode("tenant", "create"))
	require.Equal(t, 0, exitCode("tenant", "create", "acme"))
	require.Equal(t, 1, exitCode("tenant", "create", "acme"), "already exists")

	serve := exec.Command(bin, "serve")
	serve.Env = append(os.Environ(), "DATABASE_URL="+url, "LISTEN_ADDR=127.0.0.1:0")
	stderr, err := serve.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, serve.Start())
	t.Cleanup(func() { _ = serve.Process.Kill() })

	listening := regexp.MustCompile(`msg=listening addr=(\S+)`)
	lines := bufio.NewScanner(stderr)
	var addr string
	for addr == "" && lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	require.NotEmpty(t, addr, "serve logs its address")
	go func() {
		for lines.Scan() { // keep draining so the server never blocks on logging
		}
	}()

	resp, err := http.Get("http://" + addr + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, serve.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- serve.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "serve exits 0 after SIGTERM")
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
}
