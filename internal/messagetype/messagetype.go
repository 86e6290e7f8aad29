// Package messagetype holds the rules for a message type's deduplication
// settings: which duplicate_key_fields and windows are acceptable, and what
// an unset window means. Ingest, the CLI and the editor share these rules.
package messagetype

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/lefia/edihub/internal/apperr"
)

// DefaultWindowHours applies when duplicate_window_hours is NULL.
const DefaultWindowHours = 168

// MaxWindowHours is ten years; a longer window is almost certainly a typo.
const MaxWindowHours = 87600

// MaxFields bounds the paths per type; a business key has a handful.
const MaxFields = 32

const maxPathLength = 512

var codePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidateCode checks a message type code such as ORDERS05.
func ValidateCode(code string) error {
	if !codePattern.MatchString(code) {
		return apperr.New(apperr.Invalid, "invalid-field",
			"message type code %q is not valid: use 1 to 64 letters, digits, '_', '.' or '-'", code)
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

// ValidateFields checks an ordered list of gjson paths.
func ValidateFields(fields []string) error {
	if len(fields) > MaxFields {
		return apperr.New(apperr.Invalid, "invalid-field",
			"duplicate_key_fields has %d paths: use at most %d", len(fields), MaxFields)
	}
	seen := make(map[string]bool, len(fields))
	for i, f := range fields {
		switch {
		case strings.TrimSpace(f) == "":
			return apperr.New(apperr.Invalid, "invalid-field", "path %d of duplicate_key_fields is empty", i+1)
		case f != strings.TrimSpace(f):
			return apperr.New(apperr.Invalid, "invalid-field",
				"path %d of duplicate_key_fields (%q) has leading or trailing spaces", i+1, f)
		case len(f) > maxPathLength:
			return apperr.New(apperr.Invalid, "invalid-field",
				"path %d of duplicate_key_fields is longer than %d characters", i+1, maxPathLength)
		case seen[f]:
			return apperr.New(apperr.Invalid, "invalid-field", "path %q appears twice in duplicate_key_fields", f)
		}
		seen[f] = true
	}
	return nil
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

// EncodeFields is the stored JSON form of a validated field list.
func EncodeFields(fields []string) []byte {
	if fields == nil {
		fields = []string{}
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		// Marshalling a []string cannot fail.
		panic(fmt.Sprintf("encode duplicate_key_fields: %v", err))
	}
	return raw
}

// DecodeFields reads the stored JSON form; NULL or [] both mean no paths.
func DecodeFields(raw []byte) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var fields []string
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("decode duplicate_key_fields: %w", err)
	}
	return fields, nil
}
