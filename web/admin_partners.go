package web

import (
	"strings"
	"time"

	"github.com/lefia/edihub/internal/partner"
)

// SectionPartners is the navigation entry of the partners page.
const SectionPartners = "partners"

// Partners is the partners page.
type Partners struct {
	Filter partner.Filter
	Page   partner.Page
}

// shortDuration is a Go duration without its zero tails: 1h, 1h30m, 10m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
