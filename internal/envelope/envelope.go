// Package envelope parses the body of POST /api/edi-hub/receive-message: the
// message type, the optional docnum and the payload, kept byte for byte.
package envelope

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/identifier"
	"github.com/lefia/edihub/internal/messagetype"
)

// MaxDocnumLength is the longest docnum accepted; an IDoc DOCNUM has 16.
const MaxDocnumLength = 255

// Envelope is a parsed receive-message body.
type Envelope struct {
	MessageType string
	Docnum      string // "" when neither the body nor the payload names one
	Payload     []byte // exactly the bytes of the "payload" member as received
}

// docnumPaths are where an IDoc control record may sit in a payload: at the
// root, under IDOC, or under the IDoc type's root element.
var docnumPaths = []string{"EDI_DC40.DOCNUM", "IDOC.EDI_DC40.DOCNUM", "*.IDOC.EDI_DC40.DOCNUM"}

// Parse validates body and extracts its members. Members other than the
// three it knows are ignored, so senders may add their own. The payload is a
// slice of body, which the caller must therefore not modify.
func Parse(body []byte) (env Envelope, err error) {
	// The envelope and its payload are the two levels read.
	s, err := checkShallow(body, 2)
	if err != nil {
		return env, err
	}
	env, _, err = parseChecked(s, s.skipSpace(0))
	return env, err
}

// parseChecked is Parse for the value at start of a body that check
// accepted, on its own or as an item of a batch. It also returns the
// envelope's members, in which a batch item's own members are found.
//
// gjson reads strings. Converting the body would copy it, and the payload
// taken from that copy would be copied again, each time as much memory as
// the body (up to MAX_BODY_BYTES). The body is not modified after it is
// read, so gjson is given views of it instead, and the payload is a slice
// of the body.
func parseChecked(s shallow, start int) (env Envelope, members map[string]gjson.Result, err error) {
	if members, err = s.object(start); err != nil {
		return env, nil, err
	}
	env, err = envelopeOf(s.body, members)
	return env, members, err
}

// envelopeOf reads the envelope from its members, found in body.
func envelopeOf(body []byte, members map[string]gjson.Result) (env Envelope, err error) {
	mt, ok := members["message_type"]
	switch {
	case !ok || mt.Type == gjson.Null:
		return env, apperr.New(apperr.Invalid, "missing-field", "message_type is required")
	case mt.Type != gjson.String || mt.Str == "":
		return env, apperr.New(apperr.Invalid, "invalid-field", "message_type must be a non-empty string, such as \"ORDERS05\"")
	}
	// A message type that cannot be a code is refused before it is looked
	// up, logged or counted, so that huge or hostile values never reach a
	// log line or a metrics label.
	if problem := identifier.Problem(mt.Str, messagetype.MaxCodeLength); problem != "" {
		return env, apperr.New(apperr.Invalid, "invalid-field", "message_type is %s", problem)
	}
	if env.MessageType, err = text("message_type", mt); err != nil {
		return env, err
	}

	payload, ok := members["payload"]
	if !ok {
		return env, apperr.New(apperr.Invalid, "missing-field", "payload is required")
	}
	env.Payload = body[payload.Index : payload.Index+len(payload.Raw)]

	if d, ok := members["docnum"]; ok && d.Type != gjson.Null {
		if d.Type != gjson.String {
			return env, apperr.New(apperr.Invalid, "invalid-field", "docnum must be a string, such as \"0000000064132944\"")
		}
		if err := CheckDocnum("docnum", d.Str); err != nil {
			return env, err
		}
		if env.Docnum, err = text("docnum", d); err != nil {
			return env, err
		}
	}
	if env.Docnum == "" {
		if env.Docnum, err = detectedDocnum(env.Payload); err != nil {
			return env, err
		}
	}
	return env, nil
}

// text is the text of the string member named name, read as the payload's
// strings are read (canon.Unquote): gjson reads a lone surrogate escape
// ("\ud800") as U+FFFD, so two different docnums would be stored as one.
// The text is a copy, so that it does not keep the body alive.
func text(name string, r gjson.Result) (string, error) {
	if !strings.Contains(r.Raw, `\`) {
		// Without an escape there is nothing to misread, and no decoding
		// to pay for on every request.
		return strings.Clone(r.Str), nil
	}
	s, err := canon.Unquote(r.Raw)
	if err != nil {
		return "", apperr.New(apperr.Invalid, "invalid-field",
			"%s is not valid UTF-8: it holds a lone surrogate escape (\\ud800 to \\udfff without its pair)", name)
	}
	return s, nil
}

// detectedDocnum is the docnum of an IDoc control record in payload, checked.
func detectedDocnum(payload []byte) (string, error) {
	docnum := DetectDocnum(payload)
	return docnum, CheckDocnum("the payload's EDI_DC40.DOCNUM", docnum)
}

// CheckDocnum refuses a docnum that could not be stored or shown as it is:
// too long, invalid UTF-8, or holding a control or bidirectional character.
// Such a message can never be stored, so the sender is told so (400)
// rather than invited to retry. where names the docnum's source.
func CheckDocnum(where, docnum string) error {
	return CheckDocnumOf(func() string { return where }, docnum)
}

// CheckDocnumOf is CheckDocnum for a source whose name is written only
// when the docnum is refused: the messages of a packet or interchange are
// each checked, and nearly all pass.
func CheckDocnumOf(where func() string, docnum string) error {
	if problem := identifier.Problem(docnum, MaxDocnumLength); problem != "" {
		return apperr.New(apperr.Invalid, "invalid-field", "%s is %s", where(), problem)
	}
	return nil
}

// DetectDocnum returns the DOCNUM of an IDoc control record in payload, or
// "" when there is none.
func DetectDocnum(payload []byte) string {
	for _, path := range docnumPaths {
		r := gjson.GetBytes(payload, path)
		if r.Type == gjson.String || r.Type == gjson.Number {
			if s := r.String(); s != "" {
				return s
			}
		}
	}
	return ""
}
