package typeeditor

import (
	"context"

	"github.com/lefia/edihub/internal/auth"
)

// Editor is everything the editor page shows.
type Editor struct {
	Type    *Type // nil while creating
	Form    Form
	Errors  Errors
	Tenants []string // where a global admin may create the type
	Recent  []Sample // recent messages of the type, to preview with
	Preview Preview
	// Impact is nil while creating (no messages yet) and while the form
	// has problems.
	Impact *Impact
	// Conflict is set when a save was refused because someone else saved
	// first; Type then holds the settings stored now.
	Conflict bool
	// Saved is the version just saved, 0 when the page reports no save.
	Saved int32
}

// PathShare returns the impact report's share of the proposed path at
// index i, false when there is no report, so that a warning about the path
// can stand next to its input as well as in the report below.
func (ed Editor) PathShare(i int) (PathShare, bool) {
	if ed.Impact == nil || i >= len(ed.Impact.Paths) {
		return PathShare{}, false
	}
	return ed.Impact.Paths[i], true
}

// Editor works out the page of form f for type t (nil: a new type) as u
// sees it: the form's problems, or else the preview and the impact of its
// settings.
func (s *Service) Editor(ctx context.Context, u auth.User, t *Type, f Form) (Editor, error) {
	scope := u.Scope()
	ed := Editor{Type: t, Form: f}
	var err error
	if t == nil && u.TenantID == nil {
		if ed.Tenants, err = s.auth.Tenants(ctx, scope); err != nil {
			return ed, err
		}
	}
	if t != nil {
		if ed.Recent, err = s.recent(ctx, scope, *t); err != nil {
			return ed, err
		}
	}
	var p Proposal
	p, ed.Errors = f.Settings()
	if !ed.Errors.Empty() {
		return ed, nil
	}
	if ed.Preview, err = s.preview(ctx, scope, t, ed.Recent, f, p); err != nil {
		return ed, err
	}
	if t != nil {
		im, err := s.impact(ctx, scope, *t, p)
		if err != nil {
			return ed, err
		}
		im.Unchanged = t.Saved(p)
		ed.Impact = &im
	}
	return ed, nil
}
