package typeeditor

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/messagetype"
)

// Sample sizes of the impact analysis: how many of the type's most recent
// messages it replays.
const (
	DefaultSampleSize = 1000
	MaxSampleSize     = 5000
)

// Form is the editor's form as the admin typed it, so that it can be shown
// again exactly as it was, problems included.
type Form struct {
	Code   string   // a new type's code
	Tenant string   // a new type's tenant (slug), chosen by a global admin
	Paths  []string // duplicate_key_fields in order, one input each
	Window string   // duplicate_window_hours; "" for the default
	// Version is the type's version when the form was opened; a save over
	// any other version is refused.
	Version string
	// SamplePayload is a pasted payload to preview, with SampleDocnum as
	// its docnum if given; when it is blank, the stored message
	// SampleMessage (an id, "" for the most recent) is previewed.
	SamplePayload string
	SampleDocnum  string
	SampleMessage string
	// SampleSize is how many recent messages the impact analysis replays.
	SampleSize string
	// Focus is the index of the path input to focus when the form is shown
	// again (the one just added), or -1.
	Focus int
}

// NewForm is the empty form of a new message type.
func NewForm() Form { return Form{Focus: -1} }

// FormFor is the form of an existing type, filled with its settings.
func FormFor(t Type) Form {
	f := Form{Paths: slices.Clone(t.Paths), Version: strconv.Itoa(int(t.Version)), Focus: -1}
	if t.WindowHours != nil {
		f.Window = strconv.Itoa(int(*t.WindowHours))
	}
	return f
}

// ParseForm reads the posted editor form and applies the button that was
// pressed to the list of paths: "add", "remove:i", "up:i", "down:i" or
// "preset:key". save reports the save button; any other button, or none
// (a preview while typing), only shows the form again.
func ParseForm(v url.Values) (f Form, save bool) {
	f = Form{
		Code: strings.TrimSpace(v.Get("code")), Tenant: v.Get("tenant"), Paths: slices.Clone(v["path"]),
		Window: strings.TrimSpace(v.Get("window")), Version: v.Get("version"),
		SampleMessage: v.Get("sample_message"), SamplePayload: v.Get("sample_payload"),
		SampleDocnum: strings.TrimSpace(v.Get("sample_docnum")), SampleSize: strings.TrimSpace(v.Get("sample_size")),
		Focus: -1,
	}
	op, arg, _ := strings.Cut(v.Get("op"), ":")
	i, err := strconv.Atoi(arg)
	inRange := err == nil && i >= 0 && i < len(f.Paths)
	switch {
	case op == "save":
		return f, true
	case op == "add":
		f.Paths = append(f.Paths, "")
		f.Focus = len(f.Paths) - 1
	case op == "remove" && inRange:
		f.Paths = slices.Delete(f.Paths, i, i+1)
	case op == "up" && inRange && i > 0:
		f.Paths[i-1], f.Paths[i] = f.Paths[i], f.Paths[i-1]
	case op == "down" && inRange && i < len(f.Paths)-1:
		f.Paths[i], f.Paths[i+1] = f.Paths[i+1], f.Paths[i]
	case op == "preset":
		if p, ok := PresetByKey(arg); ok {
			f.Paths = slices.Clone(p.Paths)
		}
	}
	return f, false
}

// Proposal is a form that passed validation.
type Proposal struct {
	Code        string // a new type's code
	Tenant      string // a new type's tenant
	Paths       []string
	WindowHours *int // nil: the default
	// Version is the version the form was opened at; 0 when it is missing
	// or garbled, which no stored type has.
	Version    int32
	SampleSize int
}

// Window is the proposed window in force, in hours.
func (p Proposal) Window() int32 {
	if p.WindowHours == nil {
		return messagetype.DefaultWindowHours
	}
	return int32(*p.WindowHours)
}

// Errors are a form's problems, each for the field it is shown next to. It
// is an error, so that a save can return the problems it found.
type Errors struct {
	Code       string
	Tenant     string
	Paths      string   // the list as a whole: too many paths
	Path       []string // per path, "" when the path is fine
	Window     string
	SampleSize string
}

// Empty reports whether the form has no problem.
func (e Errors) Empty() bool { return len(e.List()) == 0 }

// List is every problem, in the order of the form's fields.
func (e Errors) List() []string {
	return nonEmpty(append([]string{e.Code, e.Tenant}, e.SettingsProblems()...))
}

// SettingsProblems are the problems of the settings a preview needs: the
// paths, the window and the sample size.
func (e Errors) SettingsProblems() []string {
	fields := append([]string{e.Paths}, e.Path...)
	return nonEmpty(append(fields, e.Window, e.SampleSize))
}

func nonEmpty(texts []string) []string {
	var list []string
	for _, s := range texts {
		if s != "" {
			list = append(list, s)
		}
	}
	return list
}

// PathProblem is the problem of path i, or "".
func (e Errors) PathProblem(i int) string {
	if i < len(e.Path) {
		return e.Path[i]
	}
	return ""
}

func (e Errors) Error() string { return strings.Join(e.List(), "; ") }

// Settings validates what a preview and a save of an existing type need:
// the paths and the window, with the rules ingest and the CLI share, and
// the impact analysis's sample size.
func (f Form) Settings() (Proposal, Errors) {
	p := Proposal{Paths: f.Paths, SampleSize: DefaultSampleSize}
	if n := len(p.Paths); f.Focus == n-1 && n > 0 && p.Paths[n-1] == "" {
		// The path just added, still blank, is the one the admin is
		// about to type: it is no problem yet, and no part of the preview.
		p.Paths = p.Paths[:n-1]
	}
	if p.Paths == nil {
		p.Paths = []string{}
	}
	var errs Errors
	// Each path's problem is shown next to it, where ValidateFields would
	// stop at the first.
	if err := messagetype.ListProblem(p.Paths); err != nil {
		errs.Paths = detail(err)
	}
	for i, err := range messagetype.PathProblems(p.Paths) {
		if err != nil {
			if errs.Path == nil {
				errs.Path = make([]string, len(p.Paths))
			}
			errs.Path[i] = detail(err)
		}
	}
	if f.Window != "" {
		hours, err := strconv.Atoi(f.Window)
		if err != nil {
			errs.Window = "duplicate_window_hours must be a whole number of hours, such as 48, or empty for the default of 168"
		} else if err := messagetype.ValidateWindow(&hours); err != nil {
			errs.Window = detail(err)
		} else {
			p.WindowHours = &hours
		}
	}
	if f.SampleSize != "" {
		n, err := strconv.Atoi(f.SampleSize)
		if err != nil || n < 1 || n > MaxSampleSize {
			errs.SampleSize = "the impact analysis reads between 1 and " + strconv.Itoa(MaxSampleSize) + " messages"
		} else {
			p.SampleSize = n
		}
	}
	if v, err := strconv.ParseInt(f.Version, 10, 32); err == nil {
		p.Version = int32(v)
	}
	return p, errs
}

// Creation validates the form of a new type that u creates: its settings,
// its code, and its tenant, which is u's own for a tenant's admin and a
// choice for a global one.
func (f Form) Creation(u auth.User) (Proposal, Errors) {
	p, errs := f.Settings()
	p.Code = f.Code
	if err := messagetype.ValidateCode(f.Code); err != nil {
		errs.Code = detail(err)
	}
	switch {
	case u.TenantID != nil:
		p.Tenant = u.TenantSlug
	case f.Tenant == "":
		errs.Tenant = "choose the tenant the message type belongs to"
	default:
		p.Tenant = f.Tenant
	}
	return p, errs
}

// detail is the user-facing text of a validation error.
func detail(err error) string {
	if ae, ok := apperr.As(err); ok {
		return ae.Detail
	}
	return err.Error()
}
