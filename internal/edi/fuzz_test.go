package edi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/edi"
)

// FuzzParse feeds arbitrary bytes to the parser: it must never panic, and
// what it accepts must be within its limits, each view valid JSON whose
// envelope names the interchange, and rebuilt from the message's bytes and
// frame as it was made.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"x12_850.edi", "edifact_orders.edi", "edifact_invoic_groups.edi"} {
		f.Add(read(f, name))
	}
	f.Add([]byte("UNA:+.? 'UNB+UNOW:4+A+B+1+1'UNH+1+X'UNT+2+1'UNZ+1+1'"))
	f.Add([]byte("ISA*"))
	limits := edi.Limits{MaxMessages: 3}
	f.Fuzz(func(t *testing.T, body []byte) {
		ic, err := edi.Parse(body, limits)
		if err != nil {
			return
		}
		require.NotEmpty(t, ic.Messages)
		require.LessOrEqual(t, len(ic.Messages), limits.MaxMessages)
		// Its acknowledgment is itself an interchange, from the receiver
		// back to the sender, holding one message.
		ack, err := edi.Parse(edi.Acknowledge(ic, 1, time.Date(2026, 12, 4, 10, 30, 0, 0, time.UTC)), edi.DefaultLimits)
		require.NoError(t, err)
		require.Equal(t, ic.Sender, ack.Receiver)
		require.Equal(t, ic.Receiver, ack.Sender)
		require.Len(t, ack.Messages, 1)
		for i, m := range ic.Messages {
			require.Equal(t, i+1, m.Position)
			require.True(t, json.Valid(m.View), "%q", m.View)
			require.True(t, utf8.Valid(m.View))
			require.Equal(t, ic.ControlNumber, gjson.GetBytes(m.View, "interchange.control_number").String())
			require.NotEmpty(t, m.Bytes)
			rebuilt, err := edi.ViewOf(m.Bytes, m.Frame)
			require.NoError(t, err)
			require.Equal(t, string(m.View), string(rebuilt), "the view rebuilt from the bytes stored")
			if m.Canonical != nil {
				want, err := canon.JSON(m.View)
				require.NoError(t, err)
				require.Equal(t, string(want), string(m.Canonical), "the canonical form written beside the view")
			}
			requireOneShape(t, m.View)
		}
	})
}

// FuzzX12RoundTrip writes the fuzzer's values into an 850 and checks that
// its view holds each exactly where the key paths read it.
func FuzzX12RoundTrip(f *testing.F) {
	f.Add("PO-4711", "ACME", "12")
	f.Add(`"quoted" \ back`, "été", "")
	f.Fuzz(func(t *testing.T, po, name, qty string) {
		clean := func(s string) string {
			s = strings.ToValidUTF8(s, "")
			return strings.Map(func(r rune) rune {
				if r == '*' || r == '>' || r == '~' || r == '\r' || r == '\n' || r == 0 {
					return -1
				}
				return r
			}, s)
		}
		po, name, qty = clean(po), clean(name), clean(qty)
		body := isa('*', '>', '~', "S", "000000001") + "\nGS*PO*S*R*20261204*0941*1*X*004010~\nST*850*1~BEG*00*SA*" + po +
			"~N1*ST*" + name + "~PO1*1*" + qty + "~SE*5*1~GE*1*1~IEA*1*000000001~"
		ic, err := edi.Parse([]byte(body), edi.DefaultLimits)
		require.NoError(t, err)
		view := ic.Messages[0].View
		require.True(t, json.Valid(view), "%q", view)
		require.Equal(t, gjson.GetBytes(view, "BEG.0.BEG03").Exists(), po != "")
		require.Equal(t, po, gjson.GetBytes(view, "BEG.0.BEG03").String())
		require.Equal(t, name, gjson.GetBytes(view, "N1.0.N102").String())
		require.Equal(t, qty, gjson.GetBytes(view, "PO1.0.PO102").String())
	})
}

// requireOneShape checks what makes a view's content hash its shape hash
// (ingest.Request.ShapeIsContent): every member but "interchange" is an
// array of the segment's occurrences, each an object of strings and arrays
// of strings, and "interchange" an object of strings and nulls. Objects
// then appear only as a segment's occurrences, so from a view's shape
// form, in which a segment that occurs once is its occurrence without
// brackets, the view is known again: two views never differ in shape
// alone.
func requireOneShape(t *testing.T, view []byte) {
	t.Helper()
	var members map[string]any
	require.NoError(t, json.Unmarshal(view, &members))
	for id, value := range members {
		if id == "interchange" {
			for name, v := range value.(map[string]any) {
				if v != nil {
					require.IsType(t, "", v, "interchange.%s", name)
				}
			}
			continue
		}
		occurrences, ok := value.([]any)
		require.True(t, ok, "segment %s is an array of its occurrences", id)
		require.NotEmpty(t, occurrences, id)
		for _, o := range occurrences {
			elements, ok := o.(map[string]any)
			require.True(t, ok, "an occurrence of %s is an object", id)
			for name, e := range elements {
				if components, ok := e.([]any); ok {
					for _, c := range components {
						require.IsType(t, "", c, "a component of %s", name)
					}
					continue
				}
				require.IsType(t, "", e, name)
			}
		}
	}
}
