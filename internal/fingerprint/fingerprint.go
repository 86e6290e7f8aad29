// Package fingerprint computes the v1 duplicate fingerprint of SPEC.md
// ("Mode 2: fingerprint"): the lowercase hex SHA-256 of the RFC 8785
// canonical JSON of the array [message_type_id, v1, …, vn], where each vi is
// the value at one of the message type's duplicate_key_fields paths, read
// with package keypath, or of [message_type_id, docnum] when no path is configured or
// every configured value is null.
//
// The fingerprint is stored and compared across releases, so any change to
// how a value enters the array is a new version of the fingerprint, not a
// fix.
package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/keypath"
)

// Input is what the fingerprint of one message is computed from.
type Input struct {
	MessageTypeID int64
	Paths         []string // key paths (package keypath), from message_types.duplicate_key_fields, in order
	Docnum        string   // "" when the message has none
	Payload       []byte   // the raw payload JSON (already known to be valid JSON)
}

// Fallback tells which list the fingerprint was computed from.
type Fallback string

// The fallbacks of SPEC.md, in the order they are considered.
const (
	FallbackNone       Fallback = ""                   // configured paths were used
	FallbackNoPaths    Fallback = "docnum_no_paths"    // no paths configured: [docnum] used
	FallbackAllMissing Fallback = "docnum_all_missing" // every configured value was null: [docnum] used
	FallbackNoDocnum   Fallback = "no_fingerprint"     // fallback needed but no docnum: no fingerprint
)

// Value is what one configured path contributed to the array. It is
// reported so that an admin can see why two messages did or did not match.
type Value struct {
	Path string
	JSON string // the value as it enters the array, as canonical JSON text: a JSON string, or an object/array, or "null"
	// Missing is true when the value carries no business identity: the
	// path matched nothing, or only null, "", [], {} or arrays and objects
	// of those (see carriesNoValue). Found is then what the path matched,
	// as JSON text, "" when it matched nothing or null.
	Missing bool
	Found   string
	// Spans are where the value sits in the payload: one per element of a
	// fan-out, none for a value computed by a multipath or a modifier.
	Spans []keypath.Span
}

// Result is the fingerprint of one message and how it was reached.
type Result struct {
	Fingerprint string  // lowercase hex SHA-256, "" when the message gets no fingerprint
	Values      []Value // one per configured path, in order (empty when none configured)
	Fallback    Fallback
}

// Compute returns the v1 fingerprint of in, as NewRule(in.MessageTypeID,
// in.Paths).Compute(in.Docnum, in.Payload) does.
func Compute(in Input) (Result, error) {
	return NewRule(in.MessageTypeID, in.Paths).Compute(in.Docnum, in.Payload)
}

// Rule is one message type's fingerprint rule: its id and its key paths,
// checked against the key-path grammar once, so that a type kept in a
// cache parses its paths once rather than for every message.
type Rule struct {
	messageTypeID int64
	paths         []keypath.Path
	err           error // why the paths cannot be evaluated; Compute returns it
}

// NewRule prepares the rule of the message type with id and paths (from
// message_types.duplicate_key_fields, in order). Paths the grammar refuses
// are reported by Compute, for the message that needs them.
func NewRule(messageTypeID int64, paths []string) Rule {
	parsed, err := parse(paths)
	return Rule{messageTypeID: messageTypeID, paths: parsed, err: err}
}

// Compute returns the v1 fingerprint of the message with docnum ("" when
// it has none) and payload (raw JSON, already known to be valid). An error
// means a path is refused by the key-path grammar (a *keypath.Error), a
// selected value exceeds the limits of evaluation (a *keypath.LimitError),
// or a selected value cannot be canonicalised (for example a number outside
// the range of a double, or an object with duplicate keys); values at paths
// that are not configured never cause an error.
func (r Rule) Compute(docnum string, payload []byte) (Result, error) {
	if r.err != nil {
		return Result{}, r.err
	}
	var res Result
	allMissing := true
	for _, path := range r.paths {
		v, err := extract(payload, path)
		if err != nil {
			return Result{}, fmt.Errorf("fingerprint path %q: %w", path, err)
		}
		res.Values = append(res.Values, v)
		allMissing = allMissing && v.Missing
	}

	id := strconv.FormatInt(r.messageTypeID, 10)
	elems := make([]string, 0, len(res.Values))
	switch {
	case len(r.paths) == 0:
		res.Fallback = FallbackNoPaths
	case allMissing:
		res.Fallback = FallbackAllMissing
	default:
		for _, v := range res.Values {
			elems = append(elems, v.JSON)
		}
	}
	if res.Fallback != FallbackNone {
		// Without a docnum the fallback list would be [message_type_id]
		// alone, which every such message of the type shares; SPEC.md
		// therefore gives these messages no fingerprint at all.
		if docnum == "" {
			res.Fallback = FallbackNoDocnum
			return res, nil
		}
		elems = append(elems, string(canon.AppendString(nil, docnum)))
	}

	canonical, err := canon.JSON(buildArray(id, elems))
	if err != nil {
		return Result{}, fmt.Errorf("fingerprint array: %w", err)
	}
	sum := sha256.Sum256(canonical)
	res.Fingerprint = hex.EncodeToString(sum[:])
	return res, nil
}

// parse checks every path against the key-path grammar, and all of them
// against the cost a type may have, before any is evaluated.
func parse(texts []string) ([]keypath.Path, error) {
	paths := make([]keypath.Path, len(texts))
	for i, text := range texts {
		p, err := keypath.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("fingerprint path %d (%q): %w", i+1, text, err)
		}
		paths[i] = p
	}
	if err := keypath.CheckTypeCost(paths); err != nil {
		return nil, fmt.Errorf("fingerprint paths: %w", err)
	}
	return paths, nil
}

// buildArray writes [id, elems...] with id as a JSON string. The elements are
// already JSON text; the whole array still goes through JCS once in Compute,
// so the hashed bytes are JCS output by construction rather than by the
// assumption that each piece was written canonically.
func buildArray(id string, elems []string) []byte {
	n := len(id) + 4
	for _, e := range elems {
		n += len(e) + 1
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '[')
	buf = canon.AppendString(buf, id)
	for _, e := range elems {
		buf = append(buf, ',')
		buf = append(buf, e...)
	}
	return append(buf, ']')
}
