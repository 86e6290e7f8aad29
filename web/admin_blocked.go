package web

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/blocked"
	"github.com/lefia/edihub/internal/messageview"
	"github.com/lefia/edihub/internal/payloaddiff"
)

// ReleaseForm is the two forms that decide on a blocked copy, accept it as
// a new message or dismiss it as reviewed, as shown again after a problem.
type ReleaseForm struct {
	Reason  string
	Problem string
	// DismissReason and DismissProblem are the dismissal's.
	DismissReason  string
	DismissProblem string
	// JustDismissed confirms a dismissal the admin just made.
	JustDismissed bool
}

func blockedURL(id int64) templ.SafeURL {
	return templ.URL(adminpath.Path(adminpath.Blocked, id))
}

// blockedReceivedURL downloads the bytes a blocked copy was received as.
func blockedReceivedURL(id int64) templ.SafeURL {
	return templ.URL(adminpath.Path(adminpath.BlockedReceived, id))
}

func releaseURL(id int64) templ.SafeURL {
	return templ.URL(adminpath.Path(adminpath.BlockedRelease, id))
}

func dismissURL(id int64) templ.SafeURL {
	return templ.URL(adminpath.Path(adminpath.BlockedDismiss, id))
}

// maxShownChanges bounds the rows of a diff: two unrelated documents that
// share a business key may differ everywhere, and past this many rows a
// table helps nobody; the copy's payload is on the page, and in its
// download.
const maxShownChanges = 1000

// shownChanges are the changes the diff lists: at most maxShownChanges, and
// no more than make messageview.MaxShownBytes of values, as clipped, so
// that a diff of large values makes no larger a page than a payload does.
func shownChanges(changes []payloaddiff.Change) []payloaddiff.Change {
	size := 0
	for i, ch := range changes[:min(len(changes), maxShownChanges)] {
		if size += len(clipValue(ch.Old)) + len(clipValue(ch.New)); size > messageview.MaxShownBytes {
			return changes[:i]
		}
	}
	return changes[:min(len(changes), maxShownChanges)]
}

// maxShownValue bounds a value in a diff cell, in characters.
const maxShownValue = 2000

// clipValue shortens a long JSON value for a diff cell, without copying
// more of it than it keeps: a value may be megabytes.
func clipValue(v string) string {
	cut, more := cutRunes(v, maxShownValue)
	if !more {
		return v
	}
	return fmt.Sprintf("%s… (%d characters)", cut, utf8.RuneCountInString(v))
}

func diffSummary(changes []payloaddiff.Change) string {
	if payloaddiff.ShapeOnly(changes) {
		// Copies kept before shape changes were told apart land here.
		return "Only the shape differs: a segment is an object in one payload and a one-item array in the other. " +
			"Key paths read both alike, so this copy says what the original says."
	}
	text := fmt.Sprintf("%d differences from the original", len(changes))
	if len(changes) == 1 {
		text = "1 difference from the original"
	}
	if shown := len(shownChanges(changes)); shown < len(changes) {
		text += fmt.Sprintf("; the first %d are listed", shown)
	}
	return text + "."
}

// header is one kept request header of a blocked copy's sender.
type header struct{ Name, Value string }

// senderHeaderList lists a sender's headers by name.
func senderHeaderList(c blocked.Copy) []header {
	list := make([]header, 0, len(c.Sender.Headers))
	for name, value := range c.Sender.Headers {
		list = append(list, header{name, value})
	}
	slices.SortFunc(list, func(a, b header) int { return strings.Compare(a.Name, b.Name) })
	return list
}

// changedCopiesText sums up the changed copies blocked against a message.
func changedCopiesText(c blocked.Copies) string {
	text := fmt.Sprintf("%d of the copies blocked against this message had changed content", c.Kept)
	if c.Kept == 1 {
		text = "1 copy blocked against this message had changed content"
	}
	return fmt.Sprintf("%s (%d accepted as a new message); each such row links to a diff.", text, c.Released)
}

// stateName names a review state on the queue's tabs.
func stateName(state string) string {
	switch state {
	case blocked.StateOpen:
		return "Open"
	case blocked.StateReleased:
		return "Released"
	case blocked.StateDismissed:
		return "Dismissed"
	}
	return "All"
}

func noCopiesText(f blocked.Filter) string {
	if f.ShownState() == blocked.StateOpen {
		return "No changed copy awaits a decision."
	}
	return "No copies match this filter."
}

// reviewWhere is where a copy arrived, with its tenant for users who see
// more than one.
func reviewWhere(c blocked.Reviewed, showTenant bool) string {
	if showTenant {
		return c.Tenant + " / " + c.Environment
	}
	return c.Environment
}
