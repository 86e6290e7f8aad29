package envelope

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		body        string
		wantType    string
		wantDocnum  string
		wantPayload string
	}{
		{
			name:        "explicit docnum, payload bytes kept",
			body:        `{"message_type":"ORDERS05","docnum":"0000000064132944","payload":{ "b" : 1,"a":[1, 2] }}`,
			wantType:    "ORDERS05",
			wantDocnum:  "0000000064132944",
			wantPayload: `{ "b" : 1,"a":[1, 2] }`,
		},
		{
			// The payload is sliced from the body at the offset gjson
			// reports; whitespace before the envelope and escaped members
			// before the payload must not shift it.
			name:        "payload sliced at the right offset",
			body:        " \n\t{\"x\":\"\\u0041\\\"}\", \"message_type\" : \"ORDERS05\",\"payload\":\n[ \"\\u00e9\", 1e3 ] , \"docnum\":\"\\u0031\"}\n",
			wantType:    "ORDERS05",
			wantDocnum:  "1",
			wantPayload: `[ "\u00e9", 1e3 ]`,
		},
		{
			name:        "docnum from control record at the root",
			body:        `{"message_type":"ORDERS05","payload":{"EDI_DC40":{"DOCNUM":"0000000000000042"}}}`,
			wantType:    "ORDERS05",
			wantDocnum:  "0000000000000042",
			wantPayload: `{"EDI_DC40":{"DOCNUM":"0000000000000042"}}`,
		},
		{
			name:        "docnum from control record under IDOC",
			body:        `{"message_type":"X","payload":{"IDOC":{"EDI_DC40":{"DOCNUM":"7"}}}}`,
			wantType:    "X",
			wantDocnum:  "7",
			wantPayload: `{"IDOC":{"EDI_DC40":{"DOCNUM":"7"}}}`,
		},
		{
			name:        "docnum from control record under the IDoc root",
			body:        `{"message_type":"X","docnum":null,"payload":{"ORDERS05":{"IDOC":{"EDI_DC40":{"DOCNUM":"0000000000900101"}}}}}`,
			wantType:    "X",
			wantDocnum:  "0000000000900101",
			wantPayload: `{"ORDERS05":{"IDOC":{"EDI_DC40":{"DOCNUM":"0000000000900101"}}}}`,
		},
		{
			name:        "explicit docnum wins over the control record",
			body:        `{"message_type":"X","docnum":"1","payload":{"EDI_DC40":{"DOCNUM":"2"}}}`,
			wantType:    "X",
			wantDocnum:  "1",
			wantPayload: `{"EDI_DC40":{"DOCNUM":"2"}}`,
		},
		{
			name:        "no docnum anywhere, scalar payload",
			body:        `{"message_type":"X","payload":"just text"}`,
			wantType:    "X",
			wantPayload: `"just text"`,
		},
		{
			name:        "unknown members ignored",
			body:        `{"message_type":"X","payload":null,"sender":"SAPQ01"}`,
			wantType:    "X",
			wantPayload: `null`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env, err := Parse([]byte(tt.body))
			require.NoError(t, err)
			require.Equal(t, tt.wantType, env.MessageType)
			require.Equal(t, tt.wantDocnum, env.Docnum)
			require.Equal(t, tt.wantPayload, string(env.Payload))
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, wantType, wantDetail string
	}{
		{"not json", `{"message_type":`, "malformed-json", "not valid JSON"},
		{"not an object", `["ORDERS05"]`, "malformed-json", "JSON object"},
		{"invalid utf-8", "{\"message_type\":\"\xff\",\"payload\":{}}", "malformed-json", "UTF-8"},
		{"duplicate member", `{"message_type":"A","message_type":"B","payload":{}}`, "malformed-json", "twice"},
		{"no message type", `{"payload":{}}`, "missing-field", "message_type"},
		{"null message type", `{"message_type":null,"payload":{}}`, "missing-field", "message_type"},
		{"empty message type", `{"message_type":"","payload":{}}`, "invalid-field", "message_type"},
		{"numeric message type", `{"message_type":5,"payload":{}}`, "invalid-field", "message_type"},
		{"no payload", `{"message_type":"A"}`, "missing-field", "payload"},
		{"numeric docnum", `{"message_type":"A","docnum":64132944,"payload":{}}`, "invalid-field", "docnum"},
		{"long docnum", `{"message_type":"A","docnum":"` + strings.Repeat("9", 256) + `","payload":{}}`, "invalid-field", "docnum"},
		{"NUL in the docnum", `{"message_type":"A","docnum":"a\u0000b","payload":{}}`, "invalid-field", "docnum is holding the invisible or control character U+0000"},
		{"right-to-left override in the docnum", `{"message_type":"A","docnum":"4711\u202Egpj","payload":{}}`, "invalid-field", "U+202E"},
		{"escape in the docnum", `{"message_type":"A","docnum":"\u001b[31m4711","payload":{}}`, "invalid-field", "U+001B"},
		{"line break in the docnum", `{"message_type":"A","docnum":"4711\r\n4712","payload":{}}`, "invalid-field", "U+000D"},
		{"NUL in the payload's DOCNUM", `{"message_type":"A","payload":{"EDI_DC40":{"DOCNUM":"1\u00002"}}}`, "invalid-field", "the payload's EDI_DC40.DOCNUM"},
		{"message type of a megabyte", `{"message_type":"` + strings.Repeat("M", 1<<20) + `","payload":{}}`, "invalid-field", "message_type is longer than 64 bytes"},
		{"NUL in the message type", `{"message_type":"ORDERS\u000005","payload":{}}`, "invalid-field", "message_type is holding"},
		{"lone surrogate in the docnum", `{"message_type":"A","docnum":"4711\ud800","payload":{}}`, "invalid-field", "docnum is not valid UTF-8"},
		{"reversed surrogates in the docnum", `{"message_type":"A","docnum":"\ude00\ud83d","payload":{}}`, "invalid-field", "lone surrogate"},
		{"lone surrogate in the message type", `{"message_type":"ORDERS\udfff","payload":{}}`, "invalid-field", "message_type is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.body))
			ae, ok := apperr.As(err)
			require.True(t, ok, "want a user-facing error, got %v", err)
			require.Equal(t, apperr.Invalid, ae.Kind)
			require.Equal(t, tt.wantType, ae.Type)
			require.Contains(t, ae.Detail, tt.wantDetail)
			require.Less(t, len(ae.Detail), 200, "a detail never repeats a long value")
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"message_type":"ORDERS05","docnum":"1","payload":{"a":1}}`))
	f.Add([]byte(`{"message_type":"X","payload":{"ORDERS05":{"IDOC":{"EDI_DC40":{"DOCNUM":"9"}}}}}`))
	f.Add([]byte(`{"message_type":"X","payload":[1,2,{"b":null}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		env, err := Parse(body)
		if err != nil {
			if _, ok := apperr.As(err); !ok {
				t.Fatalf("error without a user-facing type: %v", err)
			}
			return
		}
		if env.MessageType == "" {
			t.Fatalf("accepted a body without message type: %q", body)
		}
		if !strings.Contains(string(body), string(env.Payload)) {
			t.Fatalf("payload %q is not a part of the body", env.Payload)
		}
	})
}

// depthByteByByte is the plain reading of depth's rule, one byte at a time:
// the oracle that the jumping version must agree with.
func depthByteByByte(body []byte) int {
	current, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range body {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case inString && b == '"':
			inString = false
		case inString:
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			current++
			if current > deepest {
				deepest = current
				if deepest > MaxDepth {
					return deepest
				}
			}
		case b == '}' || b == ']':
			current--
		}
	}
	return deepest
}

func FuzzDepth(f *testing.F) {
	for _, seed := range []string{
		`{"a":[1,{"b":"}]"}]}`, `"\\"`, `"\\\"[["`, `["\"",["x\\\\"],{}]`, `{"unterminated": "[[[`,
		`[[[[` + strings.Repeat(`"\\\\\"[`, 3) + `"]]]]`, strings.Repeat("[", MaxDepth+2),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if got, want := depth(body, 0), depthByteByByte(body); got != want {
			t.Fatalf("depth(%q) = %d, byte by byte %d", body, got, want)
		}
	})
}

// A packet's or interchange's message names itself in the problem, and
// only there: the name is not written for a docnum that passes.
func TestCheckDocnumOfNamesTheSourceOnlyWhenRefused(t *testing.T) {
	named := 0
	where := func() string { named++; return "transaction set 2 of 3 (850 0002)'s control number" }
	require.NoError(t, CheckDocnumOf(where, "0002"))
	require.Zero(t, named, "a docnum that passes writes no name")

	err := CheckDocnumOf(where, "00\u202e02")
	ae, ok := apperr.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "invalid-field", ae.Type)
	require.True(t, strings.HasPrefix(ae.Detail, "transaction set 2 of 3 (850 0002)'s control number is "), ae.Detail)
	require.Equal(t, 1, named)
}
