package typeeditor

import (
	"context"
	"errors"
	"fmt"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/provision"
)

// StaleError refuses a save made over a version that is no longer the
// stored one: another admin saved in between, and saving anyway would
// silently undo their change.
type StaleError struct {
	Current Type // the type as stored now
}

// StaleMessage is what a refused save tells the admin.
const StaleMessage = "this message type was changed by someone else since you opened it; " +
	"your changes were not saved — review the current values"

func (e *StaleError) Error() string { return StaleMessage }

// Create creates the message type p describes, recorded as u's doing. A
// code already taken or a tenant that does not exist is returned as Errors.
func (s *Service) Create(ctx context.Context, u auth.User, p Proposal) (int64, error) {
	if !u.IsAdmin() {
		return 0, auth.ErrAdminOnly
	}
	mt, err := s.prov.CreateMessageType(ctx, p.Tenant, provision.MessageTypeSpec{
		Code: p.Code, Fields: p.Paths, WindowHours: p.WindowHours, Actor: u.Actor(),
	})
	if ae, ok := apperr.As(err); ok && ae.Err == nil {
		switch ae.Kind {
		case apperr.Conflict:
			return 0, Errors{Code: ae.Detail}
		case apperr.NotFound:
			return 0, Errors{Tenant: ae.Detail}
		}
	}
	if err != nil {
		return 0, err
	}
	return mt.ID, nil
}

// Update saves p's settings over type id if it is still at p.Version, with
// a message_type.updated event of before and after in the same
// transaction, and returns the saved type. Otherwise nothing is written
// and the error is a *StaleError holding the stored type.
func (s *Service) Update(ctx context.Context, u auth.User, id int64, p Proposal) (Type, error) {
	if !u.IsAdmin() {
		return Type{}, auth.ErrAdminOnly
	}
	var saved Type
	err := db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		before, err := getType(ctx, q, u.Scope(), id)
		if err != nil {
			return err
		}
		if before.Version != p.Version {
			return &StaleError{Current: before}
		}
		var window *int32
		if p.WindowHours != nil {
			w := int32(*p.WindowHours)
			window = &w
		}
		// The update applies only at the version just read. Every change
		// bumps the version, so when it applies, before holds exactly the
		// settings it replaces; when someone else saved in between, it
		// matches no row (a save still in flight is waited for, then
		// re-checked).
		mt, err := q.MessageTypeUpdate(ctx, db.MessageTypeUpdateParams{
			TenantID: before.TenantID, ID: id, Version: p.Version,
			DuplicateKeyFields: p.Paths, DuplicateWindowHours: window,
		})
		if errors.Is(err, db.ErrNotFound) {
			current, err := getType(ctx, q, u.Scope(), id)
			if err != nil {
				return err
			}
			return &StaleError{Current: current}
		}
		if err != nil {
			return fmt.Errorf("update message type %d: %w", id, err)
		}
		saved = newType(mt, before.Tenant)
		return auditevent.RecordMessageType(ctx, q, u.Actor(), mt.TenantID, mt.ID, auditevent.MessageTypeUpdated, map[string]any{
			"message_type_id": mt.ID, "code": mt.Code, "version": mt.Version,
			"before": settings(before), "after": settings(saved),
		})
	})
	if err == nil {
		// The next message of this type is judged by the saved settings.
		s.prov.Announce(saved.TenantID)
	}
	return saved, err
}

// settings is how a type's deduplication settings appear in audit events.
func settings(t Type) map[string]any {
	paths := t.Paths
	if paths == nil {
		paths = []string{}
	}
	return map[string]any{"duplicate_key_fields": paths, "duplicate_window_hours": t.WindowHours}
}
