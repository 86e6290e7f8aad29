package main

import (
	"bufio"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
)

// runMainVar, set to 1 in its environment, makes the test binary run main
// instead of the tests (see TestMain).
const runMainVar = "EDIHUB_TEST_RUN_MAIN"

// TestMain lets the test binary stand in for the edihub binary: the tests
// start it again with runMainVar set, and it runs the very main function
// compiled with them. Building edihub from the test instead would compile
// every dependency a second time, without the race detector's flags, which
// on a new machine costs minutes.
func TestMain(m *testing.M) {
	if os.Getenv(runMainVar) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// edihub returns a command that runs this binary as edihub with args,
// against databaseURL and with the extra environment variables vars.
func edihub(databaseURL string, args []string, vars ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), append([]string{runMainVar + "=1", "DATABASE_URL=" + databaseURL}, vars...)...)
	return cmd
}

// The binary's main, run as its own process: exit codes for bad command
// lines and failures, and a clean exit 0 after SIGTERM.
func TestBinary(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)

	exitCode := func(args ...string) int {
		err := edihub(url, args).Run()
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

	serve := edihub(url, []string{"serve"}, "LISTEN_ADDR=127.0.0.1:0")
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
