package adminlist

// An admin list keeps its filter in its URL's query, so that a filtered
// page can be shared and the back button works: one table of parameters
// per filter reads it and writes it.

import (
	"net/url"
	"strings"
)

// Param is one query parameter of a filter F: its name and the field of F
// that holds its value.
type Param[F any] struct {
	Name  string
	Field func(*F) *string
}

// Read returns the filter that q holds, each value without surrounding
// space.
func Read[F any](params []Param[F], q url.Values) F {
	var f F
	for _, p := range params {
		*p.Field(&f) = strings.TrimSpace(q.Get(p.Name))
	}
	return f
}

// Values returns f as query values, empty fields left out.
func Values[F any](params []Param[F], f F) url.Values {
	q := url.Values{}
	for _, p := range params {
		if v := *p.Field(&f); v != "" {
			q.Set(p.Name, v)
		}
	}
	return q
}

// URL is path with f as its query, empty fields left out.
func URL[F any](params []Param[F], path string, f F) string {
	q := Values(params, f)
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
