package keyset_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/keyset"
)

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	c := keyset.Cursor{Time: time.Date(2026, 3, 10, 10, 15, 1, 123456000, time.UTC), ID: 42}
	got, err := keyset.DecodeCursor(c.Encode())
	require.NoError(t, err)
	require.Equal(t, c, got)
	for _, bad := range []string{"", "!!", "MTIz", "eC40Mg", "MTIzLjA", "MTIzLi0x"} {
		_, err := keyset.DecodeCursor(bad)
		require.Error(t, err, bad)
	}
}

// Every form the filter forms ask for, and those a datetime-local input or
// a hand-written URL sends, is read; a time without a zone is UTC.
func TestParseTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 31, 14, 5, 0, 0, time.UTC)
	for _, s := range []string{"2026-01-31 14:05", "2026-01-31T14:05", "2026-01-31 14:05:00", "2026-01-31T14:05:00",
		"2026-01-31T15:05:00+01:00"} {
		got, ok := keyset.ParseTime(s)
		require.True(t, ok, s)
		require.True(t, at.Equal(got), s)
	}
	day, ok := keyset.ParseTime("2026-01-31")
	require.True(t, ok)
	require.Equal(t, time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC), day)
	for _, bad := range []string{"01/31/2026", "yesterday", "2026-13-01", ""} {
		_, ok := keyset.ParseTime(bad)
		require.False(t, ok, bad)
	}
}
