package envelope

import (
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/apperr"
)

// This file keeps the envelope's reading as it was before the body's
// containers were noted while it is checked: gjson found every member and
// item by scanning it. The differential tests and fuzzers hold the shallow
// reader to what it did, error for error.

func gjsonParse(body []byte) (Envelope, error) {
	if err := CheckJSON(body); err != nil {
		return Envelope{}, err
	}
	env, _, err := gjsonParseChecked(body)
	return env, err
}

func gjsonParseBatch(body []byte, maxItems int) ([]BatchItem, error) {
	if err := CheckJSON(body); err != nil {
		return nil, err
	}
	root := gjson.Parse(unsafe.String(unsafe.SliceData(body), len(body)))
	if !root.IsObject() {
		return nil, apperr.New(apperr.Invalid, "malformed-json", "the body must be a JSON object")
	}
	members, err := gjsonMembersOf(root)
	if err != nil {
		return nil, err
	}
	messages, ok := members["messages"]
	if !ok {
		return nil, apperr.New(apperr.Invalid, "missing-field", "messages is required")
	}
	list := messages.Array()
	if !messages.IsArray() || len(list) == 0 || len(list) > maxItems {
		return nil, apperr.New(apperr.Invalid, "invalid-field",
			"messages must be an array of 1 to %d envelopes", maxItems)
	}
	items := make([]BatchItem, len(list))
	for i, raw := range list {
		items[i].read(gjsonParseChecked(body[raw.Index : raw.Index+len(raw.Raw)]))
	}
	return items, nil
}

func gjsonParseChecked(body []byte) (env Envelope, members map[string]gjson.Result, err error) {
	root := gjson.Parse(unsafe.String(unsafe.SliceData(body), len(body)))
	if !root.IsObject() {
		return env, nil, apperr.New(apperr.Invalid, "malformed-json", "the body must be a JSON object")
	}
	if members, err = gjsonMembersOf(root); err != nil {
		return env, nil, err
	}
	env, err = envelopeOf(body, members)
	return env, members, err
}

func gjsonMembersOf(root gjson.Result) (map[string]gjson.Result, error) {
	members := map[string]gjson.Result{}
	var dupErr error
	root.ForEach(func(key, value gjson.Result) bool {
		if _, seen := members[key.Str]; seen {
			dupErr = apperr.New(apperr.Invalid, "malformed-json", "the member %q appears twice in the body", key.Str)
			return false
		}
		members[key.Str] = value
		return true
	})
	return members, dupErr
}
