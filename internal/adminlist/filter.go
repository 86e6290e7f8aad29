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

// NameParams are the query parameters of the Names that a filter F embeds.
func NameParams[F any](names func(*F) *Names) []Param[F] {
	return []Param[F]{
		{Name: "tenant", Field: func(f *F) *string { return &names(f).Tenant }},
		{Name: "environment", Field: func(f *F) *string { return &names(f).Environment }},
		{Name: "message_type", Field: func(f *F) *string { return &names(f).MessageType }},
	}
}

// WindowParams are the query parameters of the Window that a filter F
// embeds.
func WindowParams[F any](window func(*F) *Window) []Param[F] {
	return []Param[F]{
		{Name: "from", Field: func(f *F) *string { return &window(f).From }},
		{Name: "to", Field: func(f *F) *string { return &window(f).To }},
		{Name: "before", Field: func(f *F) *string { return &window(f).Before }},
	}
}
