package web

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auditlog"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/typeeditor"
)

func typeURL(id int64) string { return adminpath.Path(adminpath.MessageType, id) }

// editorURL is where the editor's form saves: the type, or the list for a
// new one.
func editorURL(ed typeeditor.Editor) string {
	if ed.Type == nil {
		return adminpath.Path(adminpath.MessageTypes)
	}
	return typeURL(ed.Type.ID)
}

// previewURL answers the editor's htmx requests with the editor's fields.
func previewURL(ed typeeditor.Editor) string {
	if ed.Type == nil {
		return adminpath.Path(adminpath.NewMessageTypePreview)
	}
	return adminpath.Path(adminpath.MessageTypePreview, ed.Type.ID)
}

// previewOnInput makes the form send itself to the preview while the admin
// types, and replace only the preview, so that the focused input stays.
func previewOnInput(ed typeeditor.Editor) templ.Attributes {
	return templ.Attributes{
		"hx-post": previewURL(ed), "hx-trigger": "input changed delay:400ms",
		"hx-target": "#preview", "hx-select": "#preview", "hx-swap": "outerHTML",
	}
}

// fieldProblem is a problem of the settings, with the id of the element
// beside its field that shows it.
type fieldProblem struct{ field, text string }

// settingsProblems are the problems a preview waits for, in the order of
// the form's fields, each with the element that shows it at its field.
func settingsProblems(e typeeditor.Errors) []fieldProblem {
	all := []fieldProblem{{"paths-problem", e.Paths}}
	for i, text := range e.Path {
		all = append(all, fieldProblem{"path-" + strconv.Itoa(i) + "-problem", text})
	}
	all = append(all, fieldProblem{"window-problem", e.Window}, fieldProblem{"sample-size-problem", e.SampleSize})
	var problems []fieldProblem
	for _, p := range all {
		if p.text != "" {
			problems = append(problems, p)
		}
	}
	return problems
}

// swapEditor makes a button that edits the list of paths post the form to
// the preview and replace the editor's fields with the edited ones; without
// JavaScript the same button posts to the form's own action, which shows
// the whole page again.
func swapEditor(ed typeeditor.Editor) templ.Attributes {
	return templ.Attributes{
		"hx-post": previewURL(ed), "hx-target": "#editor", "hx-select": "#editor", "hx-swap": "outerHTML",
	}
}

// duplicatesURL is the audit log of a type's blocked duplicates.
func duplicatesURL(t typeeditor.Listed) templ.SafeURL {
	f := auditlog.Filter{Action: auditevent.DuplicateBlocked, Names: adminlist.Names{Tenant: t.Tenant, MessageType: t.Code}}
	return templ.URL(f.URL())
}

func windowText(hours *int32) string {
	if hours == nil {
		return fmt.Sprintf("%d h (the default)", messagetype.DefaultWindowHours)
	}
	return fmt.Sprintf("%d h", *hours)
}

// sampleOption describes a recent message in the sample choice.
func sampleOption(m typeeditor.Sample) string {
	return fmt.Sprintf("#%d · %s · docnum %s · %s", m.ID, m.Environment, orNone(m.Docnum), formatTime(m.ReceivedAt))
}

// sampleSelected reports whether recent message i is the chosen sample:
// the one named, or the most recent when none is.
func sampleSelected(f typeeditor.Form, m typeeditor.Sample, i int) bool {
	if f.SampleMessage == "" {
		return i == 0
	}
	return f.SampleMessage == strconv.FormatInt(m.ID, 10)
}

func previewSubject(pv typeeditor.Preview) string {
	if pv.MessageID != 0 {
		return fmt.Sprintf("Message %d, docnum %s, as ingest computes it with these settings:", pv.MessageID, orNone(pv.Docnum))
	}
	return fmt.Sprintf("The pasted payload, docnum %s, as ingest would compute it with these settings:", orNone(pv.Docnum))
}

func previewFallbackText(f fingerprint.Fallback) string {
	if f == fingerprint.FallbackNone {
		return "The fingerprint is made of the values at these paths."
	}
	return fallbackText(f)
}

// impactSummary is the analysis in one sentence, in the words an admin
// decides on.
func impactSummary(im typeeditor.Impact) string {
	if im.Unchanged {
		return fmt.Sprintf("No change: these are the saved settings. Below is what they did to the last %s.", messages(im.Messages))
	}
	s := fmt.Sprintf("This change would have blocked %d of the last %s", im.NewlyBlocked, messages(im.Messages))
	if im.NoLongerBlocked > 0 {
		s += fmt.Sprintf(" and let through %d that the current settings block", im.NoLongerBlocked)
	}
	return s + "."
}

func unmatchedHeading(n int) string {
	if n == 1 {
		return "A proposed path matches 0 % of the sample messages"
	}
	return fmt.Sprintf("%d proposed paths match 0 %% of the sample messages", n)
}

func unmatchedText(p typeeditor.PathShare) string {
	if p.Of == 1 {
		return "no value in the one message replayed"
	}
	return fmt.Sprintf("no value in any of the %d messages replayed", p.Of)
}

func constantHeading(n int) string {
	if n == 1 {
		return "A proposed path reads one value in every sample message"
	}
	return fmt.Sprintf("%d proposed paths read one value in every sample message", n)
}

// maxValueShown bounds a key value quoted in a sentence; the preview's
// table shows values whole.
const maxValueShown = 60

// shorten cuts a value quoted in a sentence to maxValueShown characters.
func shorten(value string) string {
	if cut, more := cutRunes(value, maxValueShown); more {
		return cut + "…"
	}
	return value
}

func constantText(p typeeditor.PathShare) string {
	return fmt.Sprintf("one value, %s, in all %d messages where it read one", shorten(p.Value), p.Matched)
}

// pathWarningText is what the warning beside a path says: that it read
// nothing, or one value throughout; "" when neither.
func pathWarningText(p typeeditor.PathShare) string {
	switch {
	case p.Unmatched():
		return unmatchedText(p)
	case p.Constant():
		return constantText(p)
	}
	return ""
}

// fallbackWhy says why a replayed message's fingerprint fell back: what
// each path read in it.
func fallbackWhy(f typeeditor.Fallback) string {
	parts := make([]string, len(f.Values))
	for i, v := range f.Values {
		if v.Found != "" {
			parts[i] = fmt.Sprintf("%s matched %s, which carries no value", v.Path, shorten(v.Found))
		} else {
			parts[i] = v.Path + " matched nothing"
		}
	}
	why := strings.Join(parts, "; ")
	if f.Kind == fingerprint.FallbackNoDocnum {
		why += "; no docnum either, so it is not deduplicated"
	}
	return why
}

func messages(n int) string {
	if n == 1 {
		return "1 message"
	}
	return strconv.Itoa(n) + " messages"
}

func share(p typeeditor.PathShare) string {
	if p.Of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", float64(p.Matched)*100/float64(p.Of))
}

func itoa(i int) string { return strconv.Itoa(i) }
