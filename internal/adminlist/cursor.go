package adminlist

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cursor is the position after which the next (older) page starts: the
// (time, id) of the last row shown. Keyset pagination on it costs the same
// on page one and page ten thousand, unlike OFFSET, and a page never
// repeats or skips a row when new rows arrive meanwhile.
type Cursor struct {
	Time time.Time
	ID   int64
}

// Before reports whether c comes before d in the order (time, id).
func (c Cursor) Before(d Cursor) bool {
	return c.Time.Before(d.Time) || c.Time.Equal(d.Time) && c.ID < d.ID
}

// Page cuts rows, read newest first with a limit of one more than size, to
// a page of at most size rows. The extra row only tells that there is an
// older page; older is then the encoded cursor of the page's last row,
// where that page starts, and "" when rows was the last page.
func Page[T any](rows []T, size int, at func(T) Cursor) (page []T, older string) {
	if len(rows) <= size {
		return rows, ""
	}
	page = rows[:size]
	return page, at(page[size-1]).Encode()
}

// Encode returns the cursor as an opaque URL-safe string.
func (c Cursor) Encode() string {
	raw := strconv.FormatInt(c.Time.UnixMicro(), 10) + "." + strconv.FormatInt(c.ID, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

var errBadCursor = errors.New("the page link is not valid: start again from the first page")

// DecodeCursor reads a cursor made by Encode.
func DecodeCursor(s string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, errBadCursor
	}
	micros, id, ok := strings.Cut(string(raw), ".")
	if !ok {
		return Cursor{}, errBadCursor
	}
	us, err1 := strconv.ParseInt(micros, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil || n <= 0 {
		return Cursor{}, errBadCursor
	}
	// PostgreSQL stores microseconds, so the round trip is exact. A time
	// outside years 1 to 9999 was made by no page link, and beyond
	// PostgreSQL's range it would fail the query rather than match nothing.
	t := time.UnixMicro(us).UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return Cursor{}, errBadCursor
	}
	return Cursor{Time: t, ID: n}, nil
}

// timeLayouts are the forms a time filter may take: what the filter forms
// ask for (a date, or a date and a time), what an HTML datetime-local input
// sends, and RFC 3339 for hand-written URLs.
var timeLayouts = []string{"2006-01-02", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05",
	"2006-01-02T15:04:05", time.RFC3339}

// TimeForms says in words what ParseTime accepts, for the filter forms.
const TimeForms = "YYYY-MM-DD or YYYY-MM-DD HH:MM, UTC"

// ParseTime reads a filter's time bound; one without a zone is UTC.
func ParseTime(s string) (time.Time, bool) {
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// ParseRange reads the from and to of a time filter; an empty one is nil,
// and one that is no time is nil and explained in problems.
func ParseRange(from, to string) (since, until *time.Time, problems []string) {
	for _, bound := range []struct {
		name, value string
		dst         **time.Time
	}{{"from", from, &since}, {"to", to, &until}} {
		if bound.value == "" {
			continue
		}
		if t, ok := ParseTime(bound.value); ok {
			*bound.dst = &t
		} else {
			problems = append(problems, fmt.Sprintf("%q is not a time (%s): write %s", bound.value, bound.name, TimeForms))
		}
	}
	return since, until, problems
}

// Bounds are a list filter's time range and the page it starts at: the
// cursor of an "older" link, nil on the first page.
type Bounds struct {
	Since, Until *time.Time
	Before       *Cursor
}

// ParseBounds reads a list filter's from, to and before; a bound that
// cannot be read is nil and explained in problems.
func ParseBounds(from, to, before string) (Bounds, []string) {
	var b Bounds
	var problems []string
	b.Since, b.Until, problems = ParseRange(from, to)
	if before != "" {
		if c, err := DecodeCursor(before); err == nil {
			b.Before = &c
		} else {
			problems = append(problems, err.Error())
		}
	}
	return b, problems
}
