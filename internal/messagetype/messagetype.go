// Package messagetype holds the rules for a message type's deduplication
// settings: which duplicate_key_fields and windows are acceptable, and what
// an unset window means. Ingest, the CLI and the editor share these rules.
package messagetype

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/keypath"
)

// Type is a message type as ingest reads it: its row, and its fingerprint
// rule with the key paths parsed once, for as long as the type is cached.
type Type struct {
	db.MessageType
	Fingerprint fingerprint.Rule
}

// Prepare makes mt ready for ingest.
func Prepare(mt db.MessageType) Type {
	return Type{MessageType: mt, Fingerprint: fingerprint.NewRule(mt.ID, mt.DuplicateKeyFields)}
}

// DefaultWindowHours applies when duplicate_window_hours is NULL.
const DefaultWindowHours = 168

// MaxWindowHours is ten years; a longer window is almost certainly a typo.
const MaxWindowHours = 87600

// MaxFields bounds the paths per type; a business key has a handful.
const MaxFields = 32

// MaxTypesPerTenant bounds a tenant's message types: each adds series to
// the metrics and a type to every sender lookup, and a hundred is far
// beyond the kinds of documents one tenant exchanges.
const MaxTypesPerTenant = 100

// MaxCodeLength is the longest message type code, in bytes.
const MaxCodeLength = 64

var codePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// The business keys of SAP's IDoc types, which the editor offers as presets
// and the demo's types use. Every path carries business identity (SPEC.md,
// Mode 2): a path that is the same for every document, such as MESTYP read
// always, would make every document lacking the number one document with
// the first, since a key with some values present never falls back to the
// docnum.
var (
	// IDocORDERS05Paths are the purchase order number, which a repeat output
	// keeps under a new DOCNUM, and the IDoc's message type (MESTYP), read
	// only from an order that has a number: the query yields [] otherwise,
	// which counts as missing, so it still tells an order change (ORDCHG)
	// from its order (ORDERS) without joining orders that lack a number.
	IDocORDERS05Paths = []string{`[*.IDOC]|#(E1EDK01.BELNR!="")#.EDI_DC40.MESTYP`, "*.IDOC.E1EDK01.BELNR"}
	// IDocINVOIC02Paths are the invoice number: the reference segment
	// E1EDK02 whose qualifier 009 says it holds the invoice number, read
	// alike whether the converter made E1EDK02 an object or an array.
	IDocINVOIC02Paths = []string{`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="009").BELNR`}
)

// reservedCodes are the message_type labels the metrics give requests of
// no single configured type (metrics.UnknownMessageType and
// metrics.MixedMessageTypes): a type of that code would be counted
// together with them.
var reservedCodes = []string{"unknown", "mixed"}

// ValidateCode checks a message type code such as ORDERS05. The answer
// repeats the code only when it is short enough to read.
func ValidateCode(code string) error {
	if !codePattern.MatchString(code) {
		shown := fmt.Sprintf(" %q", code)
		if len(code) > MaxCodeLength {
			shown = ""
		}
		return apperr.New(apperr.Invalid, "invalid-field",
			"message type code%s is not valid: use 1 to %d letters, digits, '_', '.' or '-'", shown, MaxCodeLength)
	}
	if slices.Contains(reservedCodes, code) {
		return apperr.New(apperr.Invalid, "invalid-field",
			"message type code %q is reserved: the metrics use it for requests of no single configured type", code)
	}
	return nil
}

// ParseFields reads duplicate_key_fields from its JSON text, e.g.
// `["*.IDOC.E1EDK01.BELNR"]`, and validates it. Empty text means no paths.
func ParseFields(text string) ([]string, error) {
	if strings.TrimSpace(text) == "" {
		return []string{}, nil
	}
	var fields []string
	if err := json.Unmarshal([]byte(text), &fields); err != nil {
		return nil, apperr.New(apperr.Invalid, "invalid-field",
			`duplicate_key_fields must be a JSON array of path strings, such as ["E1EDK01.BELNR"]`)
	}
	if fields == nil {
		fields = []string{}
	}
	return fields, ValidateFields(fields)
}

// ValidateFields checks an ordered list of key paths and returns the first
// problem.
func ValidateFields(fields []string) error {
	if err := validateFieldCount(len(fields)); err != nil {
		return err
	}
	for _, err := range PathProblems(fields) {
		if err != nil {
			return err
		}
	}
	return ListProblem(fields)
}

// ListProblem checks what concerns the paths together: their number, and
// the cost of evaluating all of them for every message (keypath.MaxTypeCost).
// Paths with a problem of their own are left out of the cost.
func ListProblem(fields []string) error {
	if err := validateFieldCount(len(fields)); err != nil {
		return err
	}
	var paths []keypath.Path
	for _, f := range fields {
		if p, err := keypath.Parse(f); err == nil {
			paths = append(paths, p)
		}
	}
	if err := keypath.CheckTypeCost(paths); err != nil {
		return apperr.New(apperr.Invalid, "invalid-field", "duplicate_key_fields is refused: %v", err)
	}
	return nil
}

func validateFieldCount(n int) error {
	if n > MaxFields {
		return apperr.New(apperr.Invalid, "invalid-field",
			"duplicate_key_fields has %d paths: use at most %d", n, MaxFields)
	}
	return nil
}

// PathProblems checks each path of fields against the key-path grammar
// (package keypath), and each against the paths before it; problems[i] is
// nil when fields[i] is fine. The editor shows every problem next to its
// path, where ValidateFields stops at the first.
func PathProblems(fields []string) []error {
	problems := make([]error, len(fields))
	seen := make(map[string]bool, len(fields))
	for i, f := range fields {
		switch {
		case strings.TrimSpace(f) == "":
			problems[i] = apperr.New(apperr.Invalid, "invalid-field", "path %d of duplicate_key_fields is empty", i+1)
		case f != strings.TrimSpace(f):
			problems[i] = apperr.New(apperr.Invalid, "invalid-field",
				"path %d of duplicate_key_fields (%q) has leading or trailing spaces", i+1, f)
		case seen[f]:
			problems[i] = apperr.New(apperr.Invalid, "invalid-field", "path %q appears twice in duplicate_key_fields", f)
		default:
			problems[i] = pathProblem(i, f)
		}
		seen[f] = true
	}
	return problems
}

// pathProblem says why the key-path grammar refuses path i (0-based) of a
// type, or returns nil.
func pathProblem(i int, path string) error {
	if _, err := keypath.Parse(path); err != nil {
		return apperr.New(apperr.Invalid, "invalid-field",
			"path %d of duplicate_key_fields (%q) is refused: %v", i+1, truncate(path), err)
	}
	return nil
}

// truncate keeps a refused path readable in a message: an overlong one is
// cut, since the message names the position anyway.
func truncate(path string) string {
	const keep = 80
	if len(path) <= keep {
		return path
	}
	return path[:keep] + "…"
}

// ValidateWindow checks duplicate_window_hours; nil means the default.
func ValidateWindow(hours *int) error {
	if hours != nil && (*hours < 1 || *hours > MaxWindowHours) {
		return apperr.New(apperr.Invalid, "invalid-field",
			"duplicate_window_hours must be between 1 and %d, or unset for the default of %d", MaxWindowHours, DefaultWindowHours)
	}
	return nil
}

// WindowHours returns the window in force for a stored setting.
func WindowHours(stored *int32) int32 {
	if stored == nil {
		return DefaultWindowHours
	}
	return *stored
}
