// Package dashboard sums up, for the admin's landing page, what ingest did
// lately within the signed-in user's scope: messages stored and duplicates
// blocked in the last 24 hours and 7 days (by mode and by content), blocked
// duplicates per day and message type for a chart, and the message types
// whose traffic is most often a duplicate. Two queries read it all, from
// the hourly traffic totals that internal/rollup keeps, plus what arrived
// since its watermark counted from messages and audit_events, so that the
// cost of a dashboard does not grow with the traffic of a week. The totals
// count traffic as it was received: they stay when messages and audit
// events expire.
package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

const (
	// ChartDays is how many UTC days the chart shows, today included.
	ChartDays = 14
	// TopTypes is how many message types the duplicate ratio list shows.
	TopTypes = 5
	// Week is the longer of the two windows the counts cover.
	Week = 7 * 24 * time.Hour
)

// Service reads the dashboard's numbers.
type Service struct {
	q *db.Queries
}

// New returns a Service on pool. Its queries run with custom plans (see
// db.CustomPlans), so that a tenant's dashboard reads that tenant's index
// range and a global one the whole action's.
func New(pool *pgxpool.Pool) *Service { return &Service{q: db.On(db.CustomPlans{Pool: pool})} }

// Window is a count over the last 24 hours and the last 7 days.
type Window struct {
	Day  int64
	Week int64
}

func (w *Window) add(n int64, lastDay, lastWeek bool) {
	if lastDay {
		w.Day += n
	}
	if lastWeek {
		w.Week += n
	}
}

// Blocked counts blocked duplicates, all of them and split two ways: by
// how they were recognised and by whether their content was identical to
// the original's.
type Blocked struct {
	Total          Window
	Fingerprint    Window
	IdempotencyKey Window
	Identical      Window
	ShapeOnly      Window // the content differed only in shape (auditevent.ContentShapeOnly)
	Changed        Window
}

// Type is one message type's traffic.
type Type struct {
	ID       int64
	Tenant   string
	Code     string
	Received Window // messages stored
	Blocked  Window // duplicates blocked
}

// Ratio is the share of the last 7 days' requests for this type that were
// blocked as duplicates: blocked / (stored + blocked).
func (t Type) Ratio() float64 {
	all := t.Received.Week + t.Blocked.Week
	if all == 0 {
		return 0
	}
	return float64(t.Blocked.Week) / float64(all)
}

// Day is one bar of the chart: a UTC day and its blocked duplicates per
// series, in the order of Dashboard.Series.
type Day struct {
	Date   time.Time
	Counts []int64
	Total  int64
}

// Dashboard is everything the dashboard page shows.
type Dashboard struct {
	// Tenants are the slugs the user may narrow the dashboard to.
	Tenants []string
	// Tenant is the tenant the dashboard is narrowed to, "" for every
	// tenant in the scope.
	Tenant string
	// Problem says why the dashboard cannot be shown as asked; the
	// numbers are empty then.
	Problem string
	// WeekStart is when the 7-day window began, for links to the events
	// it counts.
	WeekStart time.Time

	Received Window
	Blocked  Blocked
	// Series are the message types that had duplicates blocked in the
	// chart's days, ordered by tenant and code.
	Series []Type
	// Days are the chart's days, oldest first, ending today (UTC).
	Days []Day
	// Top are the message types with the highest duplicate ratio over
	// the last 7 days, highest first; only types with blocked duplicates.
	Top []Type
	// Types are all the message types of the dashboard's tenants, by
	// tenant and code, for the message types list.
	Types []Type
}

// Load returns the dashboard of scope, narrowed to tenant (a slug, "" for
// every tenant the scope sees), as of now. A tenant outside the scope reads
// as one that does not exist.
func (s *Service) Load(ctx context.Context, scope auth.Scope, tenant string, now time.Time) (Dashboard, error) {
	now = now.UTC()
	d := Dashboard{Tenant: tenant, WeekStart: now.Add(-Week)}
	tenants, err := s.q.TenantList(ctx, scope.TenantFilter())
	if err != nil {
		return d, fmt.Errorf("list tenants: %w", err)
	}
	var tenantID *int64
	for _, t := range tenants {
		d.Tenants = append(d.Tenants, t.Slug)
		if t.Slug == tenant {
			tenantID = &t.ID
		}
	}
	if tenant != "" && tenantID == nil {
		d.Problem = fmt.Sprintf("there is no tenant %q", tenant)
		return d, nil
	}

	// The two counts read different tables and take about as long as each
	// other: run side by side, on two connections, the page waits for the
	// slower one only. Each reads the watermark and its hours in one
	// snapshot of its own, which is all the counts need (see
	// queries/traffic_rollups.sql).
	firstDay := now.Truncate(24*time.Hour).AddDate(0, 0, -(ChartDays - 1))
	var counts []db.TrafficMessageCountsRow
	var stats []db.TrafficBlockedCountsRow
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		counts, err = s.q.TrafficMessageCounts(gctx, db.TrafficMessageCountsParams{
			ScopeTenantID: scope.TenantFilter(), TenantID: tenantID,
		})
		if err != nil {
			return fmt.Errorf("count messages: %w", err)
		}
		return nil
	})
	g.Go(func() (err error) {
		stats, err = s.q.TrafficBlockedCounts(gctx, db.TrafficBlockedCountsParams{
			Since: firstDay, ScopeTenantID: scope.TenantFilter(), TenantID: tenantID,
		})
		if err != nil {
			return fmt.Errorf("count blocked duplicates: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return d, err
	}
	d.sum(counts, stats, firstDay)
	return d, nil
}

// sum fills the dashboard from the two queries' rows.
func (d *Dashboard) sum(counts []db.TrafficMessageCountsRow, stats []db.TrafficBlockedCountsRow, firstDay time.Time) {
	types := make([]Type, len(counts))
	index := make(map[int64]int, len(counts))
	for i, c := range counts {
		types[i] = Type{ID: c.MessageTypeID, Tenant: c.TenantSlug, Code: c.Code, Received: Window{Day: c.LastDay, Week: c.LastWeek}}
		index[c.MessageTypeID] = i
		d.Received.Day += c.LastDay
		d.Received.Week += c.LastWeek
	}

	// perDay[type][day] counts the chart's bars before the series, the
	// types that have any, are known.
	perDay := make(map[int][ChartDays]int64)
	for _, r := range stats {
		// The statement splits by the words of auditevent's Mode* and
		// Content* constants, as the events record them.
		for w, n := range map[*Window]int64{
			&d.Blocked.Total: r.Blocked, &d.Blocked.Fingerprint: r.Fingerprint, &d.Blocked.IdempotencyKey: r.IdempotencyKey,
			&d.Blocked.Identical: r.Identical, &d.Blocked.ShapeOnly: r.ShapeOnly, &d.Blocked.Changed: r.Changed,
		} {
			w.add(n, r.LastDay, r.LastWeek)
		}
		if r.MessageTypeID == nil {
			continue // every blocked duplicate names its type; this is defensive
		}
		i, ok := index[*r.MessageTypeID]
		if !ok {
			continue
		}
		types[i].Blocked.add(r.Blocked, r.LastDay, r.LastWeek)
		if r.Day == nil {
			continue // a count for a window only, whose hour the chart has (see TrafficBlockedCounts)
		}
		// A day outside the chart can only come from a database clock
		// ahead of this one across midnight; the totals above keep it.
		if day := int(r.Day.Sub(firstDay) / (24 * time.Hour)); day >= 0 && day < ChartDays {
			bars := perDay[i]
			bars[day] += r.Blocked
			perDay[i] = bars
		}
	}

	d.Days = make([]Day, ChartDays)
	for day := range d.Days {
		d.Days[day].Date = firstDay.AddDate(0, 0, day)
	}
	for i, t := range types {
		bars, ok := perDay[i]
		if !ok {
			continue
		}
		d.Series = append(d.Series, t)
		for day := range d.Days {
			d.Days[day].Counts = append(d.Days[day].Counts, bars[day])
			d.Days[day].Total += bars[day]
		}
	}

	for _, t := range types {
		if t.Blocked.Week > 0 {
			d.Top = append(d.Top, t)
		}
	}
	slices.SortStableFunc(d.Top, func(a, b Type) int {
		return cmp.Or(cmp.Compare(b.Ratio(), a.Ratio()), cmp.Compare(b.Blocked.Week, a.Blocked.Week))
	})
	d.Top = d.Top[:min(len(d.Top), TopTypes)]
	d.Types = types
}
