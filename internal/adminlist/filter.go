package adminlist

// Window is the part of an admin list's filter that pages through a time
// range, newest first; each list's Filter embeds it, and the lists that
// name tenants, environments and message types embed Names too.
type Window struct {
	From   string // start, inclusive, UTC
	To     string // end, exclusive, UTC
	Before string // cursor: rows older than this; "" for the newest page
}

// Bounds reads w; a bound that cannot be read is nil and explained in
// problems.
func (w Window) Bounds() (Bounds, []string) { return ParseBounds(w.From, w.To, w.Before) }
