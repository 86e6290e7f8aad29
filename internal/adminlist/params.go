package adminlist

// An admin list keeps its filter in its URL's query, so that a filtered
// page can be shared and the back button works: one List per filter reads
// it, writes it and pages it.

import (
	"net/url"
	"slices"
	"strings"
)

// Param is one query parameter of a filter F: its name and the field of F
// that holds its value.
type Param[F any] struct {
	Name  string
	Field func(*F) *string
}

// List is how one admin list's filter F travels in its URL: F's own
// parameters, those of the Names and the Window it embeds, and the path of
// the page that shows it.
type List[F any] struct {
	path   string
	params []Param[F]
	window func(*F) *Window
}

// NewList describes the list shown at path, whose filter F has the own
// parameters, embeds the Window that window returns, and the Names that
// names returns (nil when F filters by no name).
func NewList[F any](path string, own []Param[F], names func(*F) *Names, window func(*F) *Window) List[F] {
	params := slices.Clone(own)
	if names != nil {
		params = append(params, nameParams(names)...)
	}
	params = append(params, windowParams(window)...)
	return List[F]{path: path, params: params, window: window}
}

// Read returns the filter that q holds, each value without surrounding
// space.
func (l List[F]) Read(q url.Values) F {
	var f F
	for _, p := range l.params {
		*p.Field(&f) = strings.TrimSpace(q.Get(p.Name))
	}
	return f
}

// Values returns f as query values, empty fields left out.
func (l List[F]) Values(f F) url.Values {
	q := url.Values{}
	for _, p := range l.params {
		if v := *p.Field(&f); v != "" {
			q.Set(p.Name, v)
		}
	}
	return q
}

// URL is the list's page showing f.
func (l List[F]) URL(f F) string {
	q := l.Values(f)
	if len(q) == 0 {
		return l.path
	}
	return l.path + "?" + q.Encode()
}

// Older is f one page further back, after cursor; with "" it is f from its
// newest row on.
func (l List[F]) Older(f F, cursor string) F {
	l.window(&f).Before = cursor
	return f
}

func nameParams[F any](names func(*F) *Names) []Param[F] {
	return []Param[F]{
		{Name: "tenant", Field: func(f *F) *string { return &names(f).Tenant }},
		{Name: "environment", Field: func(f *F) *string { return &names(f).Environment }},
		{Name: "message_type", Field: func(f *F) *string { return &names(f).MessageType }},
	}
}

func windowParams[F any](window func(*F) *Window) []Param[F] {
	return []Param[F]{
		{Name: "from", Field: func(f *F) *string { return &window(f).From }},
		{Name: "to", Field: func(f *F) *string { return &window(f).To }},
		{Name: "before", Field: func(f *F) *string { return &window(f).Before }},
	}
}
