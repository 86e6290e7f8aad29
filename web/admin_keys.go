package web

import (
	"time"

	"github.com/a-h/templ"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/provision"
)

// APIKeys is the API keys page.
type APIKeys struct {
	List   []provision.APIKey
	Places []provision.Place // where the admin may create keys
	Now    time.Time         // what the keys' states are judged against
	// NewKey is a key just created or rotated, shown in this answer only;
	// NewKeyWhere names its environment, RotatedFrom the key it succeeds.
	NewKey      string
	NewKeyWhere string
	RotatedFrom int64
	Revoked     int64 // a key just revoked, confirmed if listed as revoked
	Problem     string
}

// RevokedShown is the key whose revocation the page confirms, if any.
func (v APIKeys) RevokedShown() (provision.APIKey, bool) {
	for _, k := range v.List {
		if k.ID == v.Revoked && provision.APIKeyState(k, v.Now) == "revoked" {
			return k, true
		}
	}
	return provision.APIKey{}, false
}

func apiKeyRevokeURL(id int64) templ.SafeURL {
	return templ.URL(adminpath.Path(adminpath.APIKeyRevoke, id))
}

func apiKeyRotateURL(id int64) templ.SafeURL {
	return templ.URL(adminpath.Path(adminpath.APIKeyRotate, id))
}

// graceHoursMax is the longest grace period the forms accept.
var graceHoursMax = int(provision.MaxGrace / time.Hour)
