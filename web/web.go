// Package web holds edihub's server-rendered pages (templ components) and
// their static assets, embedded in the binary.
package web

import "embed"

// Static holds the files served under /static/.
//
//go:embed static
var Static embed.FS
