package schema_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
)

// The checks of a message's fingerprint and of an Idempotency-Key
// (migration 038) accept exactly what the regular expressions they replace
// accepted, which expanded a bounded repetition into as many states.
func TestChecksAcceptWhatTheirRegularExpressionsDid(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	hex64 := strings.Repeat("0123456789abcdef", 4)
	fingerprints := []string{
		hex64, strings.ToUpper(hex64), hex64[:63], hex64 + "0", hex64[:63] + "g", hex64[:63] + "\n",
		"\n" + hex64[:63], hex64[:62] + "é", "", strings.Repeat("f", 64), hex64[:32] + " " + hex64[33:],
	}
	keys := []string{
		"k", "order-4711", " ", "~", strings.Repeat("a", 255), strings.Repeat("a", 256), "", "tab\there",
		"new\nline", "del\x7f", "café", "日本", `back\slash`, `"quoted"`,
	}
	check := func(old, replacement string, values []string) {
		t.Helper()
		for _, v := range values {
			var before, after bool
			err := pool.QueryRow(t.Context(), "SELECT "+old+", "+replacement, v).Scan(&before, &after)
			require.NoError(t, err)
			require.Equal(t, before, after, "%q", v)
		}
	}
	check(`$1::text ~ '^[0-9a-f]{64}$'`, `length($1::text) = 64 AND $1::text !~ '[^0-9a-f]'`, fingerprints)
	check(`$1::text ~ '^[\x20-\x7e]{1,255}$'`, `length($1::text) BETWEEN 1 AND 255 AND $1::text !~ '[^\x20-\x7e]'`, keys)

	// And the tables hold the new checks, not the old ones.
	rows, err := pool.Query(t.Context(), `
		SELECT conrelid::regclass::text || '.' || conname, convalidated FROM pg_constraint
		WHERE conrelid IN ('messages'::regclass, 'idempotency_keys'::regclass) AND contype = 'c'
		  AND pg_get_constraintdef(oid) ~ '(computed_fingerprint|key) ~'`)
	require.NoError(t, err)
	defer rows.Close()
	var found []string
	for rows.Next() {
		var name string
		var validated bool
		require.NoError(t, rows.Scan(&name, &validated))
		require.True(t, validated, name)
		found = append(found, name)
	}
	require.NoError(t, rows.Err())
	require.Empty(t, found, "no check matches a regular expression with a bounded repetition")
	var names []string
	require.NoError(t, pool.QueryRow(t.Context(), `
		SELECT array_agg(conname ORDER BY conname) FROM pg_constraint
		WHERE conname IN ('messages_computed_fingerprint_hex', 'idempotency_keys_key_printable') AND convalidated`).Scan(&names))
	require.Equal(t, []string{"idempotency_keys_key_printable", "messages_computed_fingerprint_hex"}, names)
}
