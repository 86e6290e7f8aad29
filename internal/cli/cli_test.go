package cli_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/cli"
	"github.com/lefia/edihub/internal/password"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/signature"
)

// result is what one command printed and returned.
type result struct {
	stdout, stderr string
	err            error
}

func (r result) lines() []string { return strings.Split(strings.TrimSpace(r.stdout), "\n") }

// values reads the name=value lines a command such as demo prints.
func (r result) values(t *testing.T) map[string]string {
	t.Helper()
	values := map[string]string{}
	for _, line := range r.lines() {
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, line)
		values[k] = v
	}
	return values
}

// run executes one edihub command in-process against databaseURL.
func run(t *testing.T, databaseURL string, vars map[string]string, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := map[string]string{"DATABASE_URL": databaseURL}
	for k, v := range vars {
		env[k] = v
	}
	err := cli.Run(context.Background(), cli.Env{
		Args: args, Getenv: func(k string) string { return env[k] },
		Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr,
	})
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// migrated returns a migrated database with tenant acme and environment production.
func migrated(t *testing.T) string {
	t.Helper()
	url := pgtest.URL(t)
	require.NoError(t, run(t, url, nil, "", "tenant", "create", "acme").err)
	require.NoError(t, run(t, url, nil, "", "env", "create", "--tenant", "acme", "production").err)
	return url
}

func requireUsageError(t *testing.T, r result, part string) {
	t.Helper()
	require.Error(t, r.err)
	require.Equal(t, 2, cli.ExitCode(r.err), "a command line that cannot be understood exits 2")
	require.ErrorContains(t, r.err, part)
	require.Empty(t, r.stdout)
}

func requireFailure(t *testing.T, r result, part string) {
	t.Helper()
	require.Error(t, r.err)
	require.Equal(t, 1, cli.ExitCode(r.err))
	require.ErrorContains(t, r.err, part)
	require.Empty(t, r.stdout)
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	url := pgtest.EmptyURL(t)
	requireFailure(t, run(t, url, nil, "", "tenant", "create", "acme"), "edihub migrate")

	r := run(t, url, nil, "", "migrate")
	require.NoError(t, r.err)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "migrations applied")
	require.NoError(t, run(t, url, nil, "", "migrate").err, "re-applying is a no-op")
	require.Equal(t, []string{"1"}, run(t, url, nil, "", "tenant", "create", "acme").lines())

	requireUsageError(t, run(t, url, nil, "", "migrate", "now"), "no arguments")
}

func TestTenantCreate(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	r := run(t, url, nil, "", "tenant", "create", "acme", "--name", "ACME Corporation")
	require.NoError(t, r.err)
	require.Len(t, r.lines(), 1)
	pool := pgtest.PoolFor(t, url)
	var name string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT name FROM tenants WHERE slug = 'acme'`).Scan(&name))
	require.Equal(t, "ACME Corporation", name)

	require.NoError(t, run(t, url, nil, "", "tenant", "create", "--name", "Globex", "globex").err, "flags before the slug")
	requireFailure(t, run(t, url, nil, "", "tenant", "create", "acme"), `tenant "acme" already exists`)
	requireFailure(t, run(t, url, nil, "", "tenant", "create", "Not A Slug"), "not valid")
	requireUsageError(t, run(t, url, nil, "", "tenant", "create"), "want 1 argument")
	requireUsageError(t, run(t, url, nil, "", "tenant", "create", "a", "b"), "want 1 argument")
	requireUsageError(t, run(t, url, nil, "", "tenant", "create", "a", "--bogus"), "flag provided but not defined")
	requireUsageError(t, run(t, url, nil, "", "tenant", "delete", "a"), "unknown subcommand")
}

func TestEnvCreate(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	r := run(t, url, nil, "", "env", "create", "--tenant", "acme", "sandbox")
	require.NoError(t, r.err)
	require.Len(t, r.lines(), 1)
	requireFailure(t, run(t, url, nil, "", "env", "create", "--tenant", "acme", "sandbox"), "already exists")
	requireFailure(t, run(t, url, nil, "", "env", "create", "--tenant", "nobody", "sandbox"), `tenant "nobody" does not exist`)
	requireUsageError(t, run(t, url, nil, "", "env", "create", "sandbox"), "--tenant is required")
	requireUsageError(t, run(t, url, nil, "", "env", "create", "--tenant", "acme"), "want 1 argument")
}

func TestAPIKeyCreate(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	r := run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "production", "--name", "SAP PI")
	require.NoError(t, r.err)
	key := r.lines()[0]
	require.True(t, strings.HasPrefix(key, "edh_"))

	pool := pgtest.PoolFor(t, url)
	var stored int
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT count(*) FROM api_keys WHERE key_hash = sha256(convert_to($1, 'UTF8'))`, key).Scan(&stored))
	require.Equal(t, 1, stored, "only the key's hash is stored")
	var leaked int
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT count(*) FROM api_keys WHERE key_prefix = $1`, key).Scan(&leaked))
	require.Zero(t, leaked)

	requireFailure(t, run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "staging", "--name", "SAP PI"), `environment "staging" does not exist`)
	requireUsageError(t, run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--name", "SAP PI"), "--env is required")
	requireUsageError(t, run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "production"), "--name is required")
	requireFailure(t, run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "production", "--name", " "), "give the key a name")
}

func TestMessageTypeCreate(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	r := run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "ORDERS05",
		"--fields", `["*.IDOC.EDI_DC40.MESTYP","*.IDOC.E1EDK01.BELNR"]`, "--window-hours", "24")
	require.NoError(t, r.err)
	id := r.lines()[0]

	pool := pgtest.PoolFor(t, url)
	var fields string
	var window *int
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT duplicate_key_fields::text, duplicate_window_hours FROM message_types WHERE id = $1`, id).Scan(&fields, &window))
	require.JSONEq(t, `["*.IDOC.EDI_DC40.MESTYP","*.IDOC.E1EDK01.BELNR"]`, fields)
	require.Equal(t, 24, *window)

	r = run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "INVOIC02")
	require.NoError(t, r.err)
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT duplicate_key_fields::text, duplicate_window_hours FROM message_types WHERE id = $1`, r.lines()[0]).Scan(&fields, &window))
	require.Equal(t, "[]", fields)
	require.Nil(t, window, "no --window-hours means the default window")

	requireFailure(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "ORDERS05"), "already exists")
	requireUsageError(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "X", "--fields", "E1EDK01.BELNR"), "JSON array")
	requireUsageError(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "X",
		"--fields", `["[@this,@this]|[@this,@this]|id"]`), `is refused: at position 2, @this is not allowed: a key path may use only @flatten (rule "modifiers")`)
	requireUsageError(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "X", "--window-hours", "a week"), "whole number")
	requireFailure(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "X", "--window-hours", "0"), "between 1 and")
	requireFailure(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "BAD CODE"), "not valid")
	requireUsageError(t, run(t, url, nil, "", "message-type", "create", "X"), "--tenant is required")
}

func TestIntegrationCreate(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	require.NoError(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "SHOP_ORDER").err)
	base := []string{"integration", "create", "--tenant", "acme", "--env", "production", "--message-type", "SHOP_ORDER"}

	r := run(t, url, nil, "", append(base, "--scheme", "standard-webhooks")...)
	require.NoError(t, r.err)
	require.Len(t, r.lines(), 2, "the id, then the generated secret")
	require.Len(t, r.lines()[0], 36)
	require.True(t, strings.HasPrefix(r.lines()[1], "whsec_"))

	r = run(t, url, nil, "", append(base, "--scheme", "shopify", "--secret", "shpss_0123456789abcdef0123456789abcdef")...)
	require.NoError(t, r.err)
	require.Equal(t, "shpss_0123456789abcdef0123456789abcdef", r.lines()[1], "a sender's own secret is kept")

	r = run(t, url, nil, "", append(base, "--scheme", "bearer")...)
	require.NoError(t, r.err)
	require.Len(t, r.lines(), 1, "bearer integrations use API keys, so there is no secret")

	// A Standard Webhooks sender that signs with ed25519 hands over its public key.
	public := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public().(ed25519.PublicKey)
	publicSecret := "whpk_" + base64.StdEncoding.EncodeToString(public)
	r = run(t, url, nil, "", append(base, "--scheme", "standard-webhooks", "--secret", publicSecret)...)
	require.NoError(t, r.err)
	require.Equal(t, publicSecret, r.lines()[1])
	requireFailure(t, run(t, url, nil, "", append(base, "--scheme", "standard-webhooks", "--secret", "whsk_"+strings.TrimPrefix(publicSecret, "whpk_"))...), "public key")

	requireFailure(t, run(t, url, nil, "", append(base, "--scheme", "carrier-pigeon")...), "standard-webhooks")
	requireFailure(t, run(t, url, nil, "", append(base, "--scheme", "standard-webhooks", "--secret", "not-whsec")...), "whsec_")
	requireFailure(t, run(t, url, nil, "", append(base[:len(base)-1], "NOPE", "--scheme", "github")...), `message type "NOPE" does not exist`)
	requireUsageError(t, run(t, url, nil, "", base...), "--scheme is required")
}

// An integration is created with the default signature tolerance, 5
// minutes, or the one --tolerance gives, whole seconds from 1s to 1h.
func TestIntegrationCreateTolerance(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	require.NoError(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "EVENT").err)
	base := []string{"integration", "create", "--tenant", "acme", "--env", "production", "--message-type", "EVENT", "--scheme", "stripe",
		"--secret", "whsec_test_stripe_0123456789abcdef"}
	pool := pgtest.PoolFor(t, url)
	tolerance := func(id string) int {
		var seconds int
		require.NoError(t, pool.QueryRow(t.Context(),
			`SELECT signature_tolerance_seconds FROM integrations WHERE id = $1`, id).Scan(&seconds))
		return seconds
	}
	r := run(t, url, nil, "", base...)
	require.NoError(t, r.err)
	require.Equal(t, 300, tolerance(r.lines()[0]))
	r = run(t, url, nil, "", append(base, "--tolerance", "10s")...)
	require.NoError(t, r.err)
	require.Equal(t, 10, tolerance(r.lines()[0]))
	for _, bad := range []string{"0s", "1500ms", "61m"} {
		requireFailure(t, run(t, url, nil, "", append(base, "--tolerance", bad)...), "whole seconds from 1 to 3600")
	}
	requireUsageError(t, run(t, url, nil, "", append(base, "--tolerance", "soon")...), "--tolerance")
}

func TestDestinationCreate(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	require.NoError(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "ORDERS05").err)
	require.NoError(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "INVOIC02").err)
	base := []string{"destination", "create", "--tenant", "acme", "--env", "production"}
	loopback := map[string]string{"DESTINATION_ALLOWED_CIDRS": "127.0.0.0/8"}

	r := run(t, url, loopback, "", append(base, "--url", "http://127.0.0.1:9000/hook",
		"--message-type", "ORDERS05", "--message-type", "INVOIC02")...)
	require.NoError(t, r.err)
	require.Len(t, r.lines(), 2, "the id, then the generated secret")
	require.Regexp(t, `^[0-9]+$`, r.lines()[0])
	require.True(t, strings.HasPrefix(r.lines()[1], "whsec_"))

	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	r = run(t, url, loopback, "", append(base, "--url", "http://127.0.0.1:9000/other", "--secret", secret)...)
	require.NoError(t, r.err)
	require.Equal(t, secret, r.lines()[1], "a given secret is kept")

	// Scheme and host are kept in lower case, the one form the table takes.
	r = run(t, url, loopback, "", append(base, "--url", "HTTP://127.0.0.1:9000/Upper")...)
	require.NoError(t, r.err)
	requireFailure(t, run(t, url, loopback, "", append(base, "--url", "http://127.0.0.1:9000/\u202e")...), "printable ASCII")

	requireFailure(t, run(t, url, nil, "", append(base, "--url", "http://127.0.0.1:9000/hook")...), "loopback")
	requireFailure(t, run(t, url, nil, "", append(base, "--url", "http://169.254.169.254/latest")...), "link-local")
	requireFailure(t, run(t, url, loopback, "", append(base, "--url", "ftp://127.0.0.1/")...), "http://")
	requireFailure(t, run(t, url, loopback, "", append(base, "--url", "http://127.0.0.1/", "--secret", "short")...), "whsec_")
	requireFailure(t, run(t, url, loopback, "", append(base, "--url", "http://127.0.0.1/", "--message-type", "NOPE")...),
		`message type "NOPE" does not exist`)
	requireUsageError(t, run(t, url, nil, "", base...), "--url is required")
	requireUsageError(t, run(t, url, nil, "", append(base, "--url", "http://127.0.0.1/", "--concurrency", "0")...), "--concurrency")
}

func TestUserCreate(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	pool := pgtest.PoolFor(t, url)

	r := run(t, url, map[string]string{"EDIHUB_PASSWORD": "correct horse battery"}, "",
		"user", "create", "--email", "ops@acme.example", "--role", "admin")
	require.NoError(t, r.err)
	require.Len(t, r.lines(), 1)

	r = run(t, url, nil, "viewer password 1\n", "user", "create", "--email", "viewer@acme.example", "--role", "viewer", "--tenant", "acme")
	require.NoError(t, r.err, "password from stdin")
	var hash string
	var tenantID *int64
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT password_hash, tenant_id FROM users WHERE email = 'viewer@acme.example'`).Scan(&hash, &tenantID))
	require.True(t, strings.HasPrefix(hash, "$argon2id$"))
	require.NotContains(t, hash, "viewer password")
	require.NotNil(t, tenantID)

	pw := map[string]string{"EDIHUB_PASSWORD": "long enough password"}
	requireFailure(t, run(t, url, pw, "", "user", "create", "--email", "OPS@acme.example", "--role", "admin"), "already exists")
	requireFailure(t, run(t, url, pw, "", "user", "create", "--email", "x@acme.example", "--role", "root"), "admin or viewer")
	requireFailure(t, run(t, url, pw, "", "user", "create", "--email", "not an email", "--role", "admin"), "valid address")
	requireFailure(t, run(t, url, pw, "", "user", "create", "--email", "x@acme.example", "--role", "admin", "--tenant", "nobody"), "does not exist")
	requireFailure(t, run(t, url, map[string]string{"EDIHUB_PASSWORD": "short"}, "", "user", "create", "--email", "x@acme.example", "--role", "admin"), "at least 12")
	requireFailure(t, run(t, url, nil, "", "user", "create", "--email", "x@acme.example", "--role", "admin"), "EDIHUB_PASSWORD")
	requireUsageError(t, run(t, url, pw, "", "user", "create", "--role", "admin"), "--email is required")
}

func TestUnknownCommandAndHelp(t *testing.T) {
	t.Parallel()
	requireUsageError(t, run(t, "", nil, ""), "no command")
	requireUsageError(t, run(t, "", nil, "", "frobnicate"), `unknown command "frobnicate"`)
	r := run(t, "", nil, "", "help")
	require.NoError(t, r.err)
	for _, cmd := range []string{"serve", "migrate", "tenant create", "env create", "apikey create",
		"message-type create", "integration create", "user create", "destination create", "channel create", "worker", "delivery retry", "demo"} {
		require.Contains(t, r.stdout, cmd)
	}
}

func TestUnreachableDatabase(t *testing.T) {
	t.Parallel()
	r := run(t, "postgres://postgres@127.0.0.1:1/edihub?connect_timeout=2", nil, "", "tenant", "create", "acme")
	requireFailure(t, r, "cannot reach the database")
	requireFailure(t, run(t, "", map[string]string{"IDEMPOTENCY_KEY_TTL": "soon"}, "", "migrate"), "IDEMPOTENCY_KEY_TTL")
}

// serve names, at start, each stored key path the key-path grammar refuses:
// such a type was saved before the grammar, and its messages are refused.
func TestServeWarnsOfRefusedKeyPaths(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	require.NoError(t, run(t, url, nil, "", "demo").err)
	_, err := pgtest.PoolFor(t, url).Exec(context.Background(),
		`UPDATE message_types SET duplicate_key_fields = '["id", "a|@pretty|@ugly"]' WHERE code = 'ORDERS05'`)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	served := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		served <- cli.Run(ctx, cli.Env{
			Args:   []string{"serve"},
			Getenv: func(k string) string { return map[string]string{"DATABASE_URL": url, "LISTEN_ADDR": "127.0.0.1:0"}[k] },
			Stdout: &bytes.Buffer{}, Stderr: &stderr,
			Listening: func(a net.Addr) { addr <- a },
		})
	}()
	<-addr
	cancel()
	require.NoError(t, <-served)
	require.Contains(t, stderr.String(), `level=WARN msg="key path refused" tenant=acme message_type=ORDERS05 problem="path 2 of duplicate_key_fields (\"a|@pretty|@ugly\") is refused: at position 3, @pretty is not allowed`)
	require.Equal(t, 1, strings.Count(stderr.String(), "key path refused"), "the demo's other paths are fine")
}

// The demo can run again and again, and its API key works for a message
// posted at once to a server started with serve.
func TestDemoThenServe(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	// The demo's destination: serve's workers hand the message on to it.
	type delivery struct {
		header http.Header
		body   []byte
	}
	delivered := make(chan delivery, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		delivered <- delivery{r.Header.Clone(), body}
	}))
	t.Cleanup(receiver.Close)
	loopback := map[string]string{"DESTINATION_ALLOWED_CIDRS": "127.0.0.0/8"}
	first := run(t, url, loopback, "", "demo", "--destination", receiver.URL)
	require.NoError(t, first.err)
	second := run(t, url, loopback, "", "demo", "--destination", receiver.URL)
	require.NoError(t, second.err, "re-running the demo is safe")
	require.Contains(t, first.stdout, "destination_id=")
	values := second.values(t)
	require.Equal(t, first.values(t)["destination_id"], values["destination_id"], "the destination is created once")
	require.Equal(t, first.values(t)["destination_secret"], values["destination_secret"], "with one secret")
	require.Equal(t, "acme", values["tenant"])
	require.True(t, strings.HasPrefix(values["api_key"], "edh_"))
	require.NotEqual(t, first.values(t)["api_key"], values["api_key"], "without --secrets each run hands out a new key")
	require.Equal(t, "unknown", values["admin_password_status"], "and leaves an admin whose password it was not given alone")

	metricsAddr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- cli.Run(ctx, cli.Env{
			Args: []string{"serve"},
			Getenv: func(k string) string {
				return map[string]string{"DATABASE_URL": url, "LISTEN_ADDR": "127.0.0.1:0", "METRICS_ADDR": metricsAddr,
					"PROFILING": "true", "DESTINATION_ALLOWED_CIDRS": "127.0.0.0/8", "DELIVERY_SYNC_INTERVAL": "100ms"}[k]
			},
			Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
			Listening: func(a net.Addr) { addr <- a },
		})
	}()
	base := "http://" + (<-addr).String()

	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
	}
	body, err := os.ReadFile(filepath.Join("testdata", "receive_message_envelope.json"))
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/api/edi-hub/receive-message", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+values["api_key"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	select {
	case d := <-delivered:
		require.Equal(t, "ORDERS05", d.header.Get("Edihub-Message-Type"))
		_, err := signature.Verify(signature.StandardWebhooks, []string{values["destination_secret"]}, d.header, d.body, time.Now())
		require.NoError(t, err, "the delivery is signed with the secret the demo printed, for its receiver to check")
	case <-time.After(20 * time.Second):
		t.Fatal("the message was not delivered")
	}

	// The metrics listener counts what the API and the workers did.
	scrape := func() string {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		require.NoError(t, err)
		exposition, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		return string(exposition)
	}
	require.Eventually(t, func() bool {
		return strings.Contains(scrape(), `edihub_delivery_attempts_total{outcome="delivered"} 1`)
	}, 10*time.Second, 50*time.Millisecond)
	exposition := scrape()
	require.Contains(t, exposition, `outcome="accepted"`)
	require.Contains(t, exposition, "edihub_db_pool_max_connections")
	require.Contains(t, exposition, "edihub_deliveries_pending 0")
	require.Contains(t, exposition, "edihub_delivery_oldest_pending_seconds 0")

	// PROFILING serves the runtime profiles beside the metrics, never on
	// the API's listener.
	status := func(url string) int {
		resp, err := http.Get(url)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, status("http://"+metricsAddr+"/debug/pprof/heap?debug=1"))
	require.Equal(t, http.StatusNotFound, status(base+"/debug/pprof/heap?debug=1"))

	cancel()
	select {
	case err := <-served:
		require.NoError(t, err, "serve shuts down cleanly when its context ends")
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

// With --secrets, the demo prints the same key and login on every run while
// they work, so that the login `make run` printed before keeps working; a
// key revoked since is replaced, and said to be new. A password changed
// since is left alone, since the database may be another run's, unless
// --reset-password says it is the caller's. The demo says what the database
// held before it.
func TestDemoKeepsItsSecrets(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	pool := pgtest.PoolFor(t, url)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "data", "demo", "secrets")
	demo := func(flags ...string) map[string]string {
		t.Helper()
		r := run(t, url, nil, "", append([]string{"demo", "--secrets", file}, flags...)...)
		require.NoError(t, r.err)
		saved, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, r.stdout, string(saved), "the file holds what was printed")
		return r.values(t)
	}
	// live requires that keys are exactly the live API keys and pw is the
	// admin's password.
	live := func(pw string, keys ...string) {
		t.Helper()
		var want, got [][]byte
		for _, k := range keys {
			h := sha256.Sum256([]byte(k))
			want = append(want, h[:])
		}
		got = pgtest.Column[[]byte](t, pool, `SELECT key_hash FROM api_keys WHERE revoked_at IS NULL`)
		require.ElementsMatch(t, want, got)
		var hash string
		require.NoError(t, pool.QueryRow(ctx, `SELECT password_hash FROM users WHERE email = 'admin@acme.example'`).Scan(&hash))
		require.NoError(t, password.Check(pw, hash))
	}

	first := demo()
	require.Equal(t, map[string]string{"found_tenants": "0", "found_messages": "0", "found_api_keys": "0", "found_destinations": "0"},
		map[string]string{"found_tenants": first["found_tenants"], "found_messages": first["found_messages"],
			"found_api_keys": first["found_api_keys"], "found_destinations": first["found_destinations"]}, "an empty database")
	require.Equal(t, "new", first["api_key_status"])
	require.Equal(t, "new", first["admin_password_status"])
	live(first["admin_password"], first["api_key"])
	info, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "only its owner reads the secrets")
	info, err = os.Stat(filepath.Dir(file))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), info.Mode().Perm())
	info, err = os.Stat(filepath.Dir(filepath.Dir(file)))
	require.NoError(t, err)
	require.NotZero(t, info.Mode().Perm()&0o011, "the directory above stays reachable by others (the postgres user of make run's cluster): %v", info.Mode())

	second := demo()
	require.Equal(t, "1", second["found_tenants"])
	require.Equal(t, "1", second["found_api_keys"])
	require.Equal(t, first["admin_id"], second["admin_id"])
	require.Equal(t, first["api_key"], second["api_key"])
	require.Len(t, first["webhook_secret"], 64, "a generated GitHub secret")
	require.Equal(t, first["webhook_integration"], second["webhook_integration"], "the webhook integration is created once")
	require.Equal(t, first["webhook_secret"], second["webhook_secret"], "and its secret shown again")
	require.Equal(t, first["admin_password"], second["admin_password"])
	require.Equal(t, "kept", second["api_key_status"])
	require.Equal(t, "kept", second["admin_password_status"])
	live(first["admin_password"], first["api_key"])

	_, err = pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now()`)
	require.NoError(t, err)
	third := demo()
	require.NotEqual(t, first["api_key"], third["api_key"], "a revoked key stays revoked")
	require.Equal(t, "new", third["api_key_status"])
	require.Equal(t, "kept", third["admin_password_status"])
	live(first["admin_password"], third["api_key"])

	changed, err := password.Hash("changed in the meantime")
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE users SET password_hash = $1`, changed)
	require.NoError(t, err)
	unknown := demo()
	require.Equal(t, "unknown", unknown["admin_password_status"], "another run's login is left alone")
	require.Empty(t, unknown["admin_password"])
	live("changed in the meantime", third["api_key"])
	fourth := demo("--reset-password")
	require.NotEqual(t, first["admin_password"], fourth["admin_password"])
	require.Equal(t, "replaced", fourth["admin_password_status"])
	require.Equal(t, "kept", fourth["api_key_status"])
	live(fourth["admin_password"], third["api_key"])

	sandbox := run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "sandbox", "--name", "SAP PI sandbox")
	require.NoError(t, sandbox.err)
	sandboxKey := sandbox.lines()[0]
	require.NoError(t, os.WriteFile(file, []byte("api_key="+sandboxKey+"\nadmin_password=unknown\n"), 0o600))
	fifth := demo("--reset-password")
	require.Equal(t, "new", fifth["api_key_status"], "the demo's key is one of its production environment")
	require.Equal(t, "replaced", fifth["admin_password_status"])
	live(fifth["admin_password"], third["api_key"], sandboxKey, fifth["api_key"])
}

// A demo whose receiver moved names the destinations an earlier run left,
// which deliver where nothing listens now, and counts what it found.
func TestDemoSaysWhatItFound(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	loopback := map[string]string{"DESTINATION_ALLOWED_CIDRS": "127.0.0.0/8"}
	first := run(t, url, loopback, "", "demo", "--destination", "http://127.0.0.1:8099/edi")
	require.NoError(t, first.err)
	require.NotContains(t, first.stdout, "other_destination=")
	store(t, url, "acme", "4711")

	moved := run(t, url, loopback, "", "demo", "--destination", "http://127.0.0.1:8098/edi")
	require.NoError(t, moved.err)
	values := moved.values(t)
	require.Equal(t, "other_destination="+first.values(t)["destination_id"]+" http://127.0.0.1:8099/edi",
		moved.lines()[slices.IndexFunc(moved.lines(), func(l string) bool { return strings.HasPrefix(l, "other_destination=") })])
	require.Equal(t, []string{"1", "1", "1", "1"},
		[]string{values["found_tenants"], values["found_messages"], values["found_api_keys"], values["found_destinations"]})
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// worker runs delivery workers only: it delivers what is stored, then stops
// cleanly when its context ends.
func TestWorker(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	delivered := make(chan string, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		delivered <- r.Header.Get("Edihub-Docnum")
	}))
	t.Cleanup(receiver.Close)
	vars := map[string]string{"DESTINATION_ALLOWED_CIDRS": "127.0.0.0/8", "DELIVERY_SYNC_INTERVAL": "100ms"}
	require.NoError(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "ORDERS05").err)
	require.NoError(t, run(t, url, vars, "", "destination", "create", "--tenant", "acme", "--env", "production",
		"--url", receiver.URL).err)
	key := run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "production", "--name", "SAP PI")
	require.NoError(t, key.err)

	// A message stored by the API of another process (here: in-process).
	store(t, url, "acme", "0000000064132944")

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() {
		env := map[string]string{"DATABASE_URL": url}
		for k, v := range vars {
			env[k] = v
		}
		stopped <- cli.Run(ctx, cli.Env{Args: []string{"worker"}, Getenv: func(k string) string { return env[k] },
			Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	}()
	select {
	case docnum := <-delivered:
		require.Equal(t, "0000000064132944", docnum)
	case <-time.After(20 * time.Second):
		t.Fatal("the worker delivered nothing")
	}
	cancel()
	select {
	case err := <-stopped:
		require.NoError(t, err, "worker stops cleanly when its context ends")
	case <-time.After(10 * time.Second):
		t.Fatal("worker did not stop")
	}
	requireUsageError(t, run(t, url, nil, "", "worker", "extra"), "worker: takes no arguments")

	r := run(t, url, nil, "", "delivery", "retry", "--all-failed")
	require.NoError(t, r.err)
	require.Equal(t, []string{"0"}, r.lines(), "nothing failed, nothing queued")
	r = run(t, url, nil, "", "delivery", "retry", "1")
	require.NoError(t, r.err)
	require.Equal(t, []string{"0"}, r.lines(), "a delivered delivery is not queued again")
	require.Contains(t, r.stderr, "delivery 1 is delivered, not failed")
	r = run(t, url, nil, "", "delivery", "retry", "999")
	require.ErrorContains(t, r.err, "delivery 999 does not exist")
	require.Equal(t, 1, cli.ExitCode(r.err), "an id that names no delivery is an error")
	require.Empty(t, r.stdout)
	requireUsageError(t, run(t, url, nil, "", "delivery", "retry"), "one delivery id")
	requireUsageError(t, run(t, url, nil, "", "delivery", "retry", "x"), "not a delivery id")
	requireUsageError(t, run(t, url, nil, "", "delivery", "retry", "1", "--destination", "2"), "one delivery id")
}
