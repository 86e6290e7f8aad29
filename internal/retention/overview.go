package retention

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/messagetype"
)

// Overview is what the admin's retention page shows: the configured
// periods, each tenant's effective message retention, and the last sweeps.
type Overview struct {
	Policy  Policy
	Tenants []TenantRetention
	Sweeps  []Sweep
	// SweepCounts is false for a tenant's user: a sweep's counts cover all
	// tenants, and so tell of other tenants' volume.
	SweepCounts bool
}

// TenantRetention is a tenant's effective message retention.
type TenantRetention struct {
	Tenant string
	MessageRetention
	// WindowHours is the window of MessageRetention.WindowType.
	WindowHours int
}

// Sweep is the last outcome of a kind's sweep, whichever replica ran it.
type Sweep struct {
	Kind       Kind
	FinishedAt time.Time
	Removed    int64
	Error      string
}

// Reader loads the retention overview.
type Reader struct {
	pool   *pgxpool.Pool
	policy Policy
}

// NewReader returns a Reader of what policy keeps.
func NewReader(pool *pgxpool.Pool, policy Policy) *Reader {
	return &Reader{pool: pool, policy: policy}
}

// Overview loads the retention of the tenants in scope and the last sweeps.
func (r *Reader) Overview(ctx context.Context, scope auth.Scope) (Overview, error) {
	q := db.On(r.pool)
	tenants, err := r.tenants(ctx, q, scope)
	if err != nil {
		return Overview{}, err
	}
	rows, err := q.RetentionSweepList(ctx)
	if err != nil {
		return Overview{}, fmt.Errorf("load the last retention sweeps: %w", err)
	}
	o := Overview{Policy: r.policy, Tenants: tenants, SweepCounts: scope.TenantFilter() == nil}
	for _, row := range rows {
		sw := Sweep{Kind: Kind(row.Kind), FinishedAt: row.FinishedAt, Error: row.Error}
		if o.SweepCounts {
			sw.Removed = row.Removed
		}
		o.Sweeps = append(o.Sweeps, sw)
	}
	// In the order of the steps; a kind this build does not sweep (a
	// newer replica's, during an upgrade) last.
	slices.SortStableFunc(o.Sweeps, func(a, b Sweep) int { return rank(a.Kind) - rank(b.Kind) })
	return o, nil
}

func rank(k Kind) int {
	if i := slices.Index(kinds, k); i >= 0 {
		return i
	}
	return len(kinds)
}

// OfTenant is the effective message retention of the one tenant a
// tenant's user sees; ok is false for a global user, whose tenants differ.
func (r *Reader) OfTenant(ctx context.Context, scope auth.Scope) (t TenantRetention, ok bool, err error) {
	if scope.TenantFilter() == nil {
		return TenantRetention{}, false, nil
	}
	tenants, err := r.tenants(ctx, db.On(r.pool), scope)
	if err != nil || len(tenants) != 1 {
		return TenantRetention{}, false, err
	}
	return tenants[0], true, nil
}

func (r *Reader) tenants(ctx context.Context, q *db.Queries, scope auth.Scope) ([]TenantRetention, error) {
	rows, err := q.MessageTypeLongestWindows(ctx, db.MessageTypeLongestWindowsParams{
		DefaultWindowHours: messagetype.DefaultWindowHours, ScopeTenantID: scope.TenantFilter(),
	})
	if err != nil {
		return nil, fmt.Errorf("load the tenants' longest duplicate windows: %w", err)
	}
	tenants := make([]TenantRetention, len(rows))
	for i, row := range rows {
		hours := int(row.WindowHours)
		tenants[i] = TenantRetention{
			Tenant: row.TenantSlug, MessageRetention: r.policy.MessageRetention(row.Code, hours), WindowHours: hours,
		}
	}
	return tenants, nil
}

// Describe says in words how long a tenant's messages are kept and why,
// e.g. "30d: the duplicate window of ORDERS05".
func (t TenantRetention) Describe() string {
	if t.Off {
		return "kept forever (RETENTION_MESSAGES=off)"
	}
	period := config.FormatRetention(t.Period)
	switch t.Reason {
	case "window":
		return fmt.Sprintf("%s: the duplicate window of %s (%d h), longer than RETENTION_MESSAGES", period, t.WindowType, t.WindowHours)
	case "key_ttl":
		return period + ": IDEMPOTENCY_KEY_TTL, longer than RETENTION_MESSAGES and every duplicate window"
	}
	return period + ": RETENTION_MESSAGES"
}
