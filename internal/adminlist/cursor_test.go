package adminlist_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/adminlist"
)

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	c := adminlist.Cursor{Time: time.Date(2026, 3, 10, 10, 15, 1, 123456000, time.UTC), ID: 42}
	got, err := adminlist.DecodeCursor(c.Encode())
	require.NoError(t, err)
	require.Equal(t, c, got)
	for _, bad := range []string{"", "!!", "MTIz", "eC40Mg", "MTIzLjA", "MTIzLi0x"} {
		_, err := adminlist.DecodeCursor(bad)
		require.Error(t, err, bad)
	}
}

// A page read one row longer than it shows links to the older page from its
// last row; a page read shorter or exactly full is the last one.
func TestPage(t *testing.T) {
	t.Parallel()
	at := func(id int64) adminlist.Cursor { return adminlist.Cursor{Time: time.Unix(id, 0).UTC(), ID: id} }
	page, older := adminlist.Page([]int64{9, 8, 7, 6}, 3, at)
	require.Equal(t, []int64{9, 8, 7}, page)
	require.Equal(t, at(7).Encode(), older)
	for _, rows := range [][]int64{{9, 8, 7}, {9}, nil} {
		page, older := adminlist.Page(rows, 3, at)
		require.Equal(t, rows, page)
		require.Empty(t, older)
	}
}

// Every form the filter forms ask for, and those a datetime-local input or
// a hand-written URL sends, is read; a time without a zone is UTC.
func TestParseTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 31, 14, 5, 0, 0, time.UTC)
	for _, s := range []string{"2026-01-31 14:05", "2026-01-31T14:05", "2026-01-31 14:05:00", "2026-01-31T14:05:00",
		"2026-01-31T15:05:00+01:00"} {
		got, ok := adminlist.ParseTime(s)
		require.True(t, ok, s)
		require.True(t, at.Equal(got), s)
	}
	day, ok := adminlist.ParseTime("2026-01-31")
	require.True(t, ok)
	require.Equal(t, time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC), day)
	for _, bad := range []string{"01/31/2026", "yesterday", "2026-13-01", ""} {
		_, ok := adminlist.ParseTime(bad)
		require.False(t, ok, bad)
	}
}

func TestParseBounds(t *testing.T) {
	t.Parallel()
	older := adminlist.Cursor{Time: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), ID: 42}
	b, problems := adminlist.ParseBounds("2026-11-01", "", older.Encode())
	require.Empty(t, problems)
	require.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), *b.Since)
	require.Nil(t, b.Until)
	require.Equal(t, older, *b.Before)

	b, problems = adminlist.ParseBounds("", "soon", "not-a-cursor")
	require.Len(t, problems, 2, "each bound that cannot be read is explained")
	require.Contains(t, problems[0], `"soon" is not a time (to)`)
	require.Nil(t, b.Since)
	require.Nil(t, b.Until)
	require.Nil(t, b.Before)
}
