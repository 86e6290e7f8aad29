package audit

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Cursor is the position after which the next (older) page starts: the
// (created_at, id) of the last event shown. Keyset pagination on it costs the
// same on page one and page ten thousand, unlike OFFSET, and a page never
// repeats or skips an event when new events arrive meanwhile.
type Cursor struct {
	Time time.Time
	ID   int64
}

// Encode returns the cursor as an opaque URL-safe string.
func (c Cursor) Encode() string {
	raw := strconv.FormatInt(c.Time.UnixMicro(), 10) + "." + strconv.FormatInt(c.ID, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

var errBadCursor = errors.New("the page link is not valid: start again from the newest events")

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
