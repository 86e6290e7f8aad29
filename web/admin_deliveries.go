package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/identifier"
	"github.com/lefia/edihub/internal/provision"
)

// SectionDestinations and SectionDeliveries are the navigation entries of
// the delivery pages.
const (
	SectionDestinations = "destinations"
	SectionDeliveries   = "deliveries"
)

// Destinations is the destinations page.
type Destinations struct {
	List []provision.Destination
	// Backlogs is each listed destination's queue, by id.
	Backlogs map[int64]delivery.Backlog
	// Saved is the destination just changed, 0 for none.
	Saved int64
	// Deleted is the destination just deleted, nil for none.
	Deleted *DeletedDestination
}

// DeletedDestination is what the list says of a destination just deleted.
type DeletedDestination struct {
	ID int64
	// Cancelled counts the deliveries it still owed, now cancelled.
	Cancelled int64
}

// DestinationForm creates a destination (ID 0) or edits one, as shown
// again after a problem.
type DestinationForm struct {
	ID int64
	// Place is "tenant/environment" of a new destination; Places are those
	// the user may choose from. An edited destination shows Tenant and
	// Environment, which do not change.
	Place       string
	Places      []provision.Place
	Tenant      string
	Environment string
	URL         string
	// MessageTypes are codes separated by commas or spaces; empty takes
	// every type.
	MessageTypes   string
	MaxConcurrency string
	Paused         bool
	Problem        string
}

// PlaceValue is how a form names a tenant's environment.
func PlaceValue(p provision.Place) string { return p.Tenant + "/" + p.Environment }

// Deliveries is the deliveries page.
type Deliveries struct {
	Filter delivery.Filter
	Page   delivery.Page
	// Destinations are those the destination filter offers.
	Destinations []provision.Destination
	// Replay is the bulk replay the page was sent to after starting one;
	// ReplayProblem says why it cannot be shown.
	Replay        *delivery.ReplayState
	ReplayProblem string
}

func destinationURL(id int64) templ.SafeURL {
	return templ.URL(adminpath.Path(adminpath.Destination, id))
}

// deliveriesOf is the deliveries page filtered to one destination.
func deliveriesOf(destinationID int64) templ.SafeURL {
	return templ.URL(delivery.Filter{Destination: strconv.FormatInt(destinationID, 10)}.URL())
}

// pendingOf is the deliveries page filtered to one destination's pending
// deliveries.
func pendingOf(destinationID int64) templ.SafeURL {
	return templ.URL(delivery.Filter{Status: delivery.StatusPending, Destination: strconv.FormatInt(destinationID, 10)}.URL())
}

func typesText(codes []string) string {
	if len(codes) == 0 {
		return "every type"
	}
	return strings.Join(codes, ", ")
}

// lateAfter is how long the oldest pending delivery of a destination
// waits before the destinations page marks its queue as behind.
const lateAfter = time.Minute

// backlogLate says whether a destination's queue is behind.
func backlogLate(b delivery.Backlog) bool { return b.Pending > 0 && b.Oldest >= lateAfter }

// pendingText is how many deliveries a destination's queue holds.
func pendingText(b delivery.Backlog) string {
	if b.Capped {
		return thousands(delivery.BacklogCountCap) + "+"
	}
	return thousands(b.Pending)
}

// oldestText is how long the oldest pending delivery has waited.
func oldestText(b delivery.Backlog) string {
	if b.Pending == 0 {
		return "–"
	}
	return ageText(b.Oldest)
}

// rateText is deliveries per second, with a decimal below ten; a few a
// minute are not shown as none.
func rateText(perSecond float64) string {
	if perSecond > 0 && perSecond < 0.05 {
		return "<0.1"
	}
	if perSecond < 10 {
		return strconv.FormatFloat(perSecond, 'f', 1, 64)
	}
	return thousands(int64(perSecond + 0.5))
}

// ageText is a wait in the largest units that say it in two numbers.
func ageText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%d d %d h", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// destinationText names a destination in a list: its id and URL.
func destinationText(d provision.Destination) string {
	return fmt.Sprintf("#%d %s", d.ID, identifier.Visible(d.URL))
}

// answerText is what an attempt got back: an HTTP status or nothing.
func answerText(status *int32) string {
	if status == nil {
		return "no answer"
	}
	return strconv.Itoa(int(*status))
}

func durationText(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// replayText says how far a bulk replay has got.
func replayText(r delivery.ReplayState) string {
	switch {
	case r.Done && r.Queued == 1:
		return fmt.Sprintf("Replay %d queued 1 failed delivery for a new round of attempts.", r.ID)
	case r.Done:
		return fmt.Sprintf("Replay %d queued %d failed deliveries for a new round of attempts.", r.ID, r.Queued)
	case r.Failed:
		return fmt.Sprintf("Replay %d gave up; the deliveries it queued before stay queued. Start it again to queue the rest.", r.ID)
	}
	return fmt.Sprintf("Replay %d is queuing the failed deliveries that match this filter in the background…", r.ID)
}

// replayPoll makes a running replay's notice reload itself every second
// until it is done.
func replayPoll(f delivery.Filter, r delivery.ReplayState) templ.Attributes {
	if r.Done || r.Failed {
		return nil
	}
	q := f.Values()
	q.Set("replay", strconv.FormatInt(r.ID, 10))
	return templ.Attributes{
		"hx-get": adminpath.Path(adminpath.Deliveries) + "?" + q.Encode(), "hx-trigger": "every 1s",
		"hx-target": "#replay", "hx-select": "#replay", "hx-swap": "outerHTML",
	}
}

// destinationFormAction is where the destination form posts: the list for
// a new destination, the destination for an edit.
func destinationFormAction(id int64) templ.SafeURL {
	if id == 0 {
		return adminURL(adminpath.Destinations)
	}
	return destinationURL(id)
}

// attemptsText says after how many attempts a delivery's last answer came.
func attemptsText(n int32) string {
	if n == 1 {
		return "after 1 attempt"
	}
	return "after " + strconv.Itoa(int(n)) + " attempts"
}

// nextText says how soon a pending delivery's next attempt is due, as a
// wait rather than a time, which is short and means the same in every
// zone; its title gives the time.
func nextText(at time.Time) string {
	wait := time.Until(at)
	if wait < time.Second {
		return "next: due now"
	}
	return "next in " + ageText(wait)
}
