package web

import "github.com/lefia/edihub/internal/provision"

// UserForm is the form that creates a user, as shown again after a problem.
type UserForm struct {
	Email   string
	Role    string
	Tenant  string
	Problem string
}

// Users is the users page.
type Users struct {
	List    []provision.User
	Tenants []string // where a global admin may create users
	Created string   // the email of the user just created, if any
	Form    UserForm
	// Changed is a user just disabled or enabled, confirmed only if listed
	// in the state ChangedTo ("disabled" or "active"), so that a crafted
	// link cannot make the page claim anything.
	Changed   int64
	ChangedTo string
	// NewPassword is a password just set for the user ResetFor, shown in
	// this answer only.
	NewPassword string
	ResetFor    int64
	Problem     string // what went wrong with a change to a listed user
}

// ChangedShown is the user whose new state the page confirms, if any.
func (v Users) ChangedShown() (provision.User, bool) {
	for _, u := range v.List {
		if u.ID == v.Changed && provision.UserState(u) == v.ChangedTo {
			return u, true
		}
	}
	return provision.User{}, false
}

// ResetShown is the user whose new password the page shows.
func (v Users) ResetShown() provision.User {
	for _, u := range v.List {
		if u.ID == v.ResetFor {
			return u
		}
	}
	return provision.User{}
}

// isSelf reports whether u is the signed-in user, whose own row offers no
// change: nobody disables themself or resets their own password here.
func isSelf(p Page, u provision.User) bool { return p.User.ID == u.ID }
