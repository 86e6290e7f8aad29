package provision

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/identifier"
	"github.com/lefia/edihub/internal/notify"
)

// MaxChannelsPerTenant bounds a tenant's notification channels: every alert
// of the tenant is sent to each, and twenty reach every team that should
// hear of one.
const MaxChannelsPerTenant = 20

// maxChannelNameBytes bounds a channel's name (the table checks it).
const maxChannelNameBytes = 200

// ChannelSpec describes a notification channel to create.
type ChannelSpec struct {
	// TenantSlug is the tenant whose alerts the channel hears of; empty
	// makes a global channel, which hears of every alert.
	TenantSlug string
	Kind       string // notify.KindEmail, KindSlack or KindWebhook
	// Target is the email address, or the URL a webhook posts to.
	Target string
	// Name is what admins call the channel; empty names it after Target.
	Name string
	// Secret is a webhook's whsec_ signing secret; empty generates one.
	// Other kinds take none.
	Secret string
	// Actor is who creates the channel, for the audit trail; empty means
	// the CLI.
	Actor string
}

// CreateChannel creates a notification channel and returns its id and, for
// a webhook, its signing secret. Its target must be valid, and a URL allowed
// by policy now (the sender checks every connection again).
func (s *Service) CreateChannel(ctx context.Context, spec ChannelSpec, policy egress.Policy) (id int64, secret string, err error) {
	target, err := validateChannelTarget(ctx, spec.Kind, spec.Target, policy)
	if err != nil {
		return 0, "", err
	}
	name, err := channelName(spec.Name, target)
	if err != nil {
		return 0, "", err
	}
	switch {
	case spec.Kind == notify.KindWebhook:
		if secret, err = signingSecret(spec.Secret); err != nil {
			return 0, "", err
		}
	case spec.Secret != "":
		return 0, "", apperr.New(apperr.Invalid, "invalid-field", "only a webhook channel takes a signing secret")
	}
	err = db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		var tenantID *int64
		if spec.TenantSlug != "" {
			t, err := tenant(ctx, q, spec.TenantSlug)
			if err != nil {
				return err
			}
			count := func(ctx context.Context, id int64) (int64, error) {
				return q.NotificationChannelCountOfTenant(ctx, &id)
			}
			if err := checkRoom(ctx, q, t, "notification channels", MaxChannelsPerTenant, count); err != nil {
				return err
			}
			tenantID = &t.ID
		}
		var stored *string
		if secret != "" {
			stored = &secret
		}
		id, err = q.NotificationChannelInsert(ctx, db.NotificationChannelInsertParams{
			TenantID: tenantID, Kind: spec.Kind, Name: name, Target: target, Secret: stored,
		})
		if err != nil {
			return fmt.Errorf("store channel: %w", err)
		}
		return auditevent.Record(ctx, q, cmp.Or(spec.Actor, auditevent.ActorCLI), tenantID, auditevent.ChannelCreated, map[string]any{
			"channel_id": strconv.FormatInt(id, 10), "kind": spec.Kind, "name": name, "target": target,
		})
	})
	if err != nil {
		return 0, "", err
	}
	return id, secret, nil
}

// validateChannelTarget checks where a channel of kind sends and returns it
// as it is kept: a bare email address, or a URL that policy allows now,
// normalized as destinations' are.
func validateChannelTarget(ctx context.Context, kind, raw string, policy egress.Policy) (string, error) {
	raw = strings.TrimSpace(raw)
	switch kind {
	case notify.KindEmail:
		if err := notify.ValidateAddress(raw); err != nil {
			return "", apperr.New(apperr.Invalid, "invalid-field", "%v", err)
		}
		return raw, nil
	case notify.KindSlack, notify.KindWebhook:
		url, err := policy.CheckURL(ctx, net.DefaultResolver, raw)
		if err != nil {
			return "", invalidURL(kind, raw, err)
		}
		return url, nil
	}
	return "", apperr.New(apperr.Invalid, "invalid-field", "a channel is email, slack or webhook, not %q", kind)
}

// channelName is the name a channel is kept with: name, or target when name
// is empty, cut to maxChannelNameBytes.
func channelName(name, target string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = strings.ToValidUTF8(target[:min(len(target), maxChannelNameBytes)], "")
	}
	if problem := identifier.Problem(name, maxChannelNameBytes); problem != "" {
		return "", apperr.New(apperr.Invalid, "invalid-field", "the channel's name is %s", problem)
	}
	return name, nil
}

// Channel is a notification channel as the admin pages show it; a
// webhook's secret is shown once, when it is created, and never read back.
type Channel struct {
	ID      int64
	Tenant  string // empty: a global channel
	Kind    string
	Name    string
	Target  string
	Created time.Time
	Updated time.Time
	// tenantID is the tenant's id, nil for a global channel.
	tenantID *int64
}

// Channels lists the channels within scope: a tenant's user sees its
// tenant's, a global user every channel.
func (s *Service) Channels(ctx context.Context, scope auth.Scope) ([]Channel, error) {
	return s.channels(ctx, scope, nil)
}

// Channel loads a channel within scope; one outside it is not found, as one
// that does not exist.
func (s *Service) Channel(ctx context.Context, scope auth.Scope, id int64) (Channel, error) {
	found, err := s.channels(ctx, scope, &id)
	if err != nil {
		return Channel{}, err
	}
	if len(found) == 0 {
		return Channel{}, notInScope("channel", id)
	}
	return found[0], nil
}

func (s *Service) channels(ctx context.Context, scope auth.Scope, id *int64) ([]Channel, error) {
	rows, err := db.On(s.pool).NotificationChannelListForAdmin(ctx, db.NotificationChannelListForAdminParams{
		ScopeTenantID: scope.TenantFilter(), ID: id,
	})
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	out := make([]Channel, len(rows))
	for i, r := range rows {
		out[i] = Channel{
			ID: r.ID, Kind: r.Kind, Name: r.Name, Target: r.Target, Created: r.CreatedAt.UTC(), Updated: r.UpdatedAt.UTC(),
			tenantID: r.TenantID,
		}
		if r.TenantSlug != nil {
			out[i].Tenant = *r.TenantSlug
		}
	}
	return out, nil
}

// ChannelChange is what an admin may change of a channel: its name and
// where it sends. Its kind, tenant and secret stay.
type ChannelChange struct {
	Name   string
	Target string
}

// UpdateChannel changes a channel within by's scope. The target is checked
// as at creation.
func (s *Service) UpdateChannel(ctx context.Context, by By, id int64, change ChannelChange, policy egress.Policy) error {
	current, err := s.Channel(ctx, by.Scope, id)
	if err != nil {
		return err
	}
	target, err := validateChannelTarget(ctx, current.Kind, change.Target, policy)
	if err != nil {
		return err
	}
	name, err := channelName(change.Name, target)
	if err != nil {
		return err
	}
	return s.changeChannel(ctx, by, id, auditevent.ChannelUpdated, func(q *db.Queries) error {
		_, err := q.NotificationChannelUpdate(ctx, db.NotificationChannelUpdateParams{
			ID: id, ScopeTenantID: by.Scope.TenantFilter(), Name: name, Target: target,
		})
		return err
	}, map[string]any{"name": name, "target": target})
}

// DeleteChannel deletes a channel within by's scope, and the notifications
// it was owed: their jobs find them gone and end.
func (s *Service) DeleteChannel(ctx context.Context, by By, id int64) error {
	return s.changeChannel(ctx, by, id, auditevent.ChannelDeleted, func(q *db.Queries) error {
		_, err := q.NotificationChannelDelete(ctx, db.NotificationChannelDeleteParams{ID: id, ScopeTenantID: by.Scope.TenantFilter()})
		return err
	}, map[string]any{})
}

// changeChannel makes a change to a channel within by's scope and records
// action with details, the channel's id and name added, in one transaction.
func (s *Service) changeChannel(ctx context.Context, by By, id int64, action string, change func(*db.Queries) error, details map[string]any) error {
	current, err := s.Channel(ctx, by.Scope, id)
	if err != nil {
		return err
	}
	return db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		err := change(q)
		if errors.Is(err, db.ErrNotFound) {
			return notInScope("channel", id)
		}
		if err != nil {
			return fmt.Errorf("%s %d: %w", action, id, err)
		}
		details["channel_id"] = strconv.FormatInt(id, 10)
		if _, ok := details["name"]; !ok {
			details["name"] = current.Name
		}
		return auditevent.Record(ctx, q, by.Actor, current.tenantID, action, details)
	})
}
