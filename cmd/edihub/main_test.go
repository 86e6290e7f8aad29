package main

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
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
	require.Equal(t, 0, exitCode("tenant", "create", "--help"))
	require.Equal(t, 0, exitCode("--version"))
	require.Equal(t, 0, exitCode("tenant", "create", "acme"))
	require.Equal(t, 1, exitCode("tenant", "create", "acme"), "already exists")

	serve, addr := startServe(t, url)
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

// startServe runs `edihub serve` against databaseURL on a free port, with
// the extra environment variables vars, and returns it with its address.
func startServe(t *testing.T, databaseURL string, vars ...string) (*exec.Cmd, string) {
	t.Helper()
	serve := edihub(databaseURL, []string{"serve"}, append([]string{"LISTEN_ADDR=127.0.0.1:0"}, vars...)...)
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
	return serve, addr
}

// Changes made with the CLI, another process, reach a running server
// that caches API key lookups for an hour: a new message type is usable
// at once, and a revoked key is refused as soon as the revocation's
// notification arrives, long before the cache's TTL.
func TestCLIChangesReachARunningServer(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	cli := func(args ...string) string {
		t.Helper()
		out, err := edihub(url, args).Output()
		require.NoError(t, err, "edihub %v", args)
		return strings.TrimSpace(string(out))
	}
	cli("tenant", "create", "acme")
	cli("env", "create", "--tenant", "acme", "production")
	key := strings.Split(cli("apikey", "create", "--tenant", "acme", "--env", "production", "--name", "smoke test"), "\n")[0]
	cli("message-type", "create", "--tenant", "acme", "ORDERS05")
	_, addr := startServe(t, url, "API_KEY_CACHE_TTL=1h")

	send := func(code string, docnum int) int {
		t.Helper()
		body := fmt.Sprintf(`{"message_type":%q,"docnum":"%d","payload":{"n":%d}}`, code, docnum, docnum)
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/edi-hub/receive-message", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusCreated, send("ORDERS05", 1), "the key's lookup is cached from here on")
	cli("message-type", "create", "--tenant", "acme", "INVOIC02")
	require.Equal(t, http.StatusCreated, send("INVOIC02", 2), "a type created elsewhere is found at once")

	id := strings.Fields(cli("apikey", "list"))[0]
	cli("apikey", "revoke", id)
	require.Eventually(t, func() bool { return send("ORDERS05", 3) == http.StatusUnauthorized },
		5*time.Second, 10*time.Millisecond, "the revocation's notification ends the cached lookup")
}
