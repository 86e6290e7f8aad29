package cli_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/password"
	"github.com/lefia/edihub/internal/pgtest"
)

// With --secrets, the demo prints the same key and login on every run while
// they work, so that the login `make run` printed before keeps working; a
// key revoked or a password changed since is replaced, and said to be new.
func TestDemoKeepsItsSecrets(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	pool := pgtest.PoolFor(t, url)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "demo", "secrets")
	demo := func() map[string]string {
		t.Helper()
		r := run(t, url, nil, "", "demo", "--secrets", file)
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
		rows, err := pool.Query(ctx, `SELECT key_hash FROM api_keys WHERE revoked_at IS NULL`)
		require.NoError(t, err)
		for rows.Next() {
			var h []byte
			require.NoError(t, rows.Scan(&h))
			got = append(got, h)
		}
		require.NoError(t, rows.Err())
		require.ElementsMatch(t, want, got)
		var hash string
		require.NoError(t, pool.QueryRow(ctx, `SELECT password_hash FROM users WHERE email = 'admin@acme.example'`).Scan(&hash))
		require.NoError(t, password.Check(pw, hash))
	}

	first := demo()
	require.Equal(t, "new", first["api_key_status"])
	require.Equal(t, "new", first["admin_password_status"])
	live(first["admin_password"], first["api_key"])
	info, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "only its owner reads the secrets")
	info, err = os.Stat(filepath.Dir(file))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), info.Mode().Perm())

	second := demo()
	require.Equal(t, first["api_key"], second["api_key"])
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
	fourth := demo()
	require.NotEqual(t, first["admin_password"], fourth["admin_password"])
	require.Equal(t, "replaced", fourth["admin_password_status"])
	require.Equal(t, "kept", fourth["api_key_status"])
	live(fourth["admin_password"], third["api_key"])

	sandbox := run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "sandbox")
	require.NoError(t, sandbox.err)
	sandboxKey := sandbox.lines()[0]
	require.NoError(t, os.WriteFile(file, []byte("api_key="+sandboxKey+"\nadmin_password=unknown\n"), 0o600))
	fifth := demo()
	require.Equal(t, "new", fifth["api_key_status"], "the demo's key is one of its production environment")
	require.Equal(t, "replaced", fifth["admin_password_status"])
	live(fifth["admin_password"], third["api_key"], sandboxKey, fifth["api_key"])
}
