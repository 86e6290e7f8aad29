package web

import (
	"github.com/a-h/templ"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/alert"
)

// SectionAlerts is the navigation entry of the alerts pages.
const SectionAlerts = "alerts"

// Alerts is the alerts page.
type Alerts struct {
	Filter alert.Filter
	Page   alert.Page
}

func alertURL(id int64) templ.SafeURL { return templ.URL(adminpath.Path(adminpath.Alert, id)) }

// alertsOf is the alerts page filtered to one state.
func alertsOf(state string) templ.SafeURL { return templ.URL(alert.Filter{State: state}.URL()) }

// alertWhere names the tenant of an alert, or says it is global.
func alertWhere(a alert.Alert) string {
	if a.Tenant == "" {
		return "global"
	}
	return a.Tenant
}
