package provision

import (
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
)

// By is who makes a change, for the audit trail, and the tenants they may
// change: the CLI changes any tenant, a signed-in admin only their scope.
type By struct {
	Actor string
	Scope auth.Scope
	// UserID is the signed-in user making the change, 0 for the CLI.
	UserID int64
}

// ByCLI is a change made with the edihub command.
var ByCLI = By{Actor: auditevent.ActorCLI, Scope: auth.GlobalScope()}

// ByUser is a change made by u in the browser. Viewers are refused before
// any change is made, whatever the caller checked already.
func ByUser(u auth.User) (By, error) {
	if !u.IsAdmin() {
		return By{}, auth.ErrAdminOnly
	}
	return By{Actor: u.Actor(), Scope: u.Scope(), UserID: u.ID}, nil
}

// notInScope answers a change to something the scope does not hold as if it
// did not exist, so that ids reveal nothing outside one's tenant.
func notInScope(what string, id any) error {
	return apperr.New(apperr.NotFound, "not-found", "there is no %s %v", what, id)
}
