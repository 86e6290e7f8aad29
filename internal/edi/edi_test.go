package edi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/edi"
)

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return b
}

func TestParseX12(t *testing.T) {
	t.Parallel()
	body := read(t, "x12_850.edi")
	ic, err := edi.Parse(body, edi.DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, edi.X12, ic.Standard)
	require.Equal(t, "ZZ:ACMEBUYER", ic.Sender)
	require.Equal(t, "ZZ:EDIHUBSELLER", ic.Receiver)
	require.Equal(t, "000000905", ic.ControlNumber)
	require.Equal(t, "00401", ic.Version)
	require.True(t, ic.AckRequested)
	require.False(t, ic.Test)
	require.Len(t, ic.Groups, 1)
	require.Equal(t, edi.Group{ID: "PO", AppSender: "ACMEBUYER", AppReceiver: "EDIHUBSELLER", ControlNumber: "905", Version: "004010", Messages: 2}, ic.Groups[0])
	require.Len(t, ic.Messages, 2)

	m := ic.Messages[0]
	require.Equal(t, 1, m.Position)
	require.Equal(t, "850", m.Code)
	require.Equal(t, "0001", m.Docnum)
	require.True(t, json.Valid(m.View), "%s", m.View)
	require.JSONEq(t, `{
		"ST": [{"ST01": "850", "ST02": "0001"}],
		"BEG": [{"BEG01": "00", "BEG02": "SA", "BEG03": "PO-4711", "BEG04": "", "BEG05": "20261204"}],
		"REF": [{"REF01": "DP", "REF02": "038"}],
		"N1": [{"N101": "ST", "N102": "ACME Distribution Center", "N103": "92", "N104": "0042"}],
		"PO1": [
			{"PO101": "1", "PO102": "12", "PO103": "EA", "PO104": "9.95", "PO105": "", "PO106": "BP", "PO107": ["ABC-100", "RED"]},
			{"PO101": "2", "PO102": "3", "PO103": "EA", "PO104": "19.5", "PO105": "", "PO106": "BP", "PO107": "ABC-200"}
		],
		"CTT": [{"CTT01": "2"}],
		"SE": [{"SE01": "8", "SE02": "0001"}],
		"interchange": {"standard": "x12", "sender": "ZZ:ACMEBUYER", "receiver": "ZZ:EDIHUBSELLER",
			"control_number": "000000905", "group_control_number": "905", "version": "004010"}
	}`, string(m.View))
	require.Equal(t, "PO-4711", gjson.GetBytes(m.View, "BEG.0.BEG03").String())
	require.True(t, bytes.HasPrefix(m.Bytes, []byte("ST*850*0001~")), "%q", m.Bytes)
	require.True(t, bytes.HasSuffix(m.Bytes, []byte("SE*8*0001~")), "%q", m.Bytes)
	require.Equal(t, "PO-4712", gjson.GetBytes(ic.Messages[1].View, "BEG.0.BEG03").String())
	require.Equal(t, 2, ic.Messages[1].Position)
}

func TestParseEDIFACT(t *testing.T) {
	t.Parallel()
	ic, err := edi.Parse(read(t, "edifact_orders.edi"), edi.DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, edi.EDIFACT, ic.Standard)
	require.Equal(t, "14:5412345000013", ic.Sender)
	require.Equal(t, "14:4012345000009", ic.Receiver)
	require.Equal(t, "IC0042", ic.ControlNumber)
	require.Equal(t, "UNOC:3", ic.Version)
	require.False(t, ic.AckRequested)
	require.Len(t, ic.Messages, 1)
	m := ic.Messages[0]
	require.Equal(t, "ORDERS", m.Code)
	require.Equal(t, "M1", m.Docnum)
	require.Equal(t, "D:96A", m.Version)
	// The release character escapes the element separator in PO?+4711.
	require.Equal(t, "PO+4711", gjson.GetBytes(m.View, "BGM.0.BGM02").String())
	require.JSONEq(t, `["137","20261204","102"]`, gjson.GetBytes(m.View, "DTM.0.DTM01").Raw)
	require.JSONEq(t, `["5412345000013","","9"]`, gjson.GetBytes(m.View, "NAD.0.NAD02").Raw)
	require.JSONEq(t, `{"standard":"edifact","sender":"14:5412345000013","receiver":"14:4012345000009",
		"control_number":"IC0042","group_control_number":null,"version":"D:96A"}`, gjson.GetBytes(m.View, "interchange").Raw)
}

func TestParseEDIFACTGroupsAndLatin1(t *testing.T) {
	t.Parallel()
	ic, err := edi.Parse(read(t, "edifact_invoic_groups.edi"), edi.DefaultLimits)
	require.NoError(t, err)
	require.True(t, ic.Test)
	require.Equal(t, "ZZ:SENDER", ic.Sender)
	require.Len(t, ic.Messages, 2)
	require.Equal(t, edi.Group{ID: "INVOIC", ControlNumber: "G1", Version: "D:96A", Messages: 2}, ic.Groups[0])
	// UNOC is ISO-8859-1: the byte 0xe9 is é.
	require.Equal(t, "INV-été", gjson.GetBytes(ic.Messages[0].View, "BGM.0.BGM02").String())
	require.Equal(t, "G1", gjson.GetBytes(ic.Messages[1].View, "interchange.group_control_number").String())
}

// Each message's canonical form is written beside its view, and is what
// canon makes of the view; a view that holds a character written
// otherwise in it (a tab here), or a segment of more than 99 elements, is
// left to canon.
func TestCanonicalForm(t *testing.T) {
	t.Parallel()
	bodies := [][]byte{x12Interchange(3, 600), edifactInterchange(3, 600)}
	for _, name := range []string{"x12_850.edi", "edifact_orders.edi", "edifact_invoic_groups.edi"} {
		bodies = append(bodies, read(t, name))
	}
	for _, body := range bodies {
		ic, err := edi.Parse(body, edi.DefaultLimits)
		require.NoError(t, err)
		for _, m := range ic.Messages {
			want, err := canon.JSON(m.View)
			require.NoError(t, err)
			require.Equal(t, string(want), string(m.Canonical))
			requireOneShape(t, m.View)
		}
	}
	x12 := string(read(t, "x12_850.edi"))
	for _, left := range []string{
		strings.Replace(x12, "PO-4711", "PO\t4711", 1),
		strings.Replace(x12, "REF*DP*038~", "REF*DP*038"+strings.Repeat("*x", 99)+"~", 1),
	} {
		ic, err := edi.Parse([]byte(left), edi.DefaultLimits)
		require.NoError(t, err)
		require.Nil(t, ic.Messages[0].Canonical)
		require.NotNil(t, ic.Messages[1].Canonical)
	}
	// An interchange's canonical forms are written up to a MiB; canon
	// makes the others'.
	ic, err := edi.Parse(x12Interchange(1000, 2048), edi.DefaultLimits)
	require.NoError(t, err)
	written := 0
	for _, m := range ic.Messages {
		written += len(m.Canonical)
	}
	require.NotNil(t, ic.Messages[0].Canonical)
	require.Nil(t, ic.Messages[999].Canonical)
	require.Greater(t, written, 900<<10)
	require.LessOrEqual(t, written, 1<<20)
}

func TestContentHashIgnoresLineBreaks(t *testing.T) {
	t.Parallel()
	body := read(t, "x12_850.edi")
	a, err := edi.Parse(body, edi.DefaultLimits)
	require.NoError(t, err)
	b, err := edi.Parse(bytes.ReplaceAll(body, []byte("\n"), nil), edi.DefaultLimits)
	require.NoError(t, err)
	c, err := edi.Parse(bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n")), edi.DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, a.ContentHash, b.ContentHash)
	require.Equal(t, a.ContentHash, c.ContentHash)
	d, err := edi.Parse(bytes.Replace(body, []byte("PO-4711"), []byte("PO-4713"), 1), edi.DefaultLimits)
	require.NoError(t, err)
	require.NotEqual(t, a.ContentHash, d.ContentHash)
}

// The content hash is the SHA-256 of the segments as received, without
// the line breaks between them, however the segments are passed on to the
// hash: many short ones, and one longer than what is gathered for it.
func TestContentHashIsTheSegmentsSHA256(t *testing.T) {
	t.Parallel()
	long := strings.Replace(string(x12Interchange(3, 300)), "REF*DP*038~", "REF*DP*"+strings.Repeat("7", 9000)+"~", 1)
	for name, body := range map[string][]byte{
		"x12":          x12Interchange(100, 2048),
		"edifact":      edifactInterchange(100, 2048),
		"long segment": []byte(long),
	} {
		ic, err := edi.Parse(body, edi.DefaultLimits)
		require.NoError(t, err, name)
		require.Equal(t, sha256.Sum256(bytes.ReplaceAll(body, []byte("\n"), nil)), ic.ContentHash, name)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	x12 := string(read(t, "x12_850.edi"))
	orders := string(read(t, "edifact_orders.edi"))
	for _, tc := range []struct {
		name, body string
		segment    string
		position   int
		element    string
		reason     string
	}{
		{"short ISA", "ISA*00*   *00~", "ISA", 1, "", "not 106"},
		{"misaligned ISA", strings.Replace(x12, "ACMEBUYER      ", "ACMEBUYER     ", 1), "ISA", 1, "ISA07", "fixed width"},
		{"separator is a letter", strings.Replace(x12, "*P*>~", "*P*A~", 1), "ISA", 1, "", "letter"},
		{"SE count", strings.Replace(x12, "SE*8*0001", "SE*7*0001", 1), "SE", 10, "SE01", "does not match the 8 segments"},
		{"SE control number", strings.Replace(x12, "SE*4*0002", "SE*4*0003", 1), "SE", 14, "SE02", `"0003" does not match ST02's "0002"`},
		{"GE count", strings.Replace(x12, "GE*2*905", "GE*3*905", 1), "GE", 15, "GE01", "does not match the 2 transaction sets"},
		{"GE control number", strings.Replace(x12, "GE*2*905", "GE*2*906", 1), "GE", 15, "GE02", "GS06"},
		{"IEA count", strings.Replace(x12, "IEA*1*", "IEA*2*", 1), "IEA", 16, "IEA01", "functional groups"},
		{"IEA control number", strings.Replace(x12, "IEA*1*000000905", "IEA*1*000000906", 1), "IEA", 16, "IEA02", "ISA13"},
		{"missing IEA", strings.Replace(x12, "IEA*1*000000905~\n", "", 1), "", 16, "", "where GS or IEA was expected"},
		{"missing SE", strings.Replace(x12, "SE*4*0002~\n", "", 1), "GE", 14, "", "no SE trailer"},
		{"cut short", x12[:len(x12)-3], "IEA", 16, "", "no terminator"},
		{"data after IEA", x12 + "ST*850*9~", "", 17, "", "follows the IEA"},
		{"not UTF-8", strings.Replace(x12, "ACME Distribution", "ACME \xff", 1), "N1", 6, "", "not valid UTF-8"},
		{"bad segment id", strings.Replace(x12, "REF*DP", "ref*DP", 1), "", 5, "", "segment id"},
		{"segment outside a set", strings.Replace(x12, "ST*850*0002~", "REF*X~", 1), "REF", 11, "", "where ST or GE was expected"},
		{"UNT count", strings.Replace(orders, "UNT+8+M1", "UNT+9+M1", 1), "UNT", 10, "UNT01", "does not match the 8 segments"},
		{"UNT reference", strings.Replace(orders, "UNT+8+M1", "UNT+8+M2", 1), "UNT", 10, "UNT02", "UNH 0062"},
		{"UNZ count", strings.Replace(orders, "UNZ+1+", "UNZ+2+", 1), "UNZ", 11, "UNZ01", "messages of the interchange"},
		{"UNZ reference", strings.Replace(orders, "UNZ+1+IC0042", "UNZ+1+IC0043", 1), "UNZ", 11, "UNZ02", "UNB 0020"},
		{"missing UNZ", strings.Replace(orders, "UNZ+1+IC0042'\n", "", 1), "", 11, "", "UNH, UNG or UNZ"},
		{"unknown syntax identifier", strings.Replace(orders, "UNOC:3", "UNOX:3", 1), "UNB", 2, "UNB01", "UNOX"},
		{"UNOW not UTF-8", strings.Replace(strings.Replace(orders, "UNOC:3", "UNOW:4", 1), "PO?+4711", "PO\xe9", 1), "BGM", 4, "", "not valid UTF-8"},
		{"UNOW sender not UTF-8", strings.Replace(strings.Replace(orders, "UNOC:3", "UNOW:4", 1), "5412345000013:14+4", "54\xf1:14+4", 1), "UNB", 2, "", "not valid UTF-8"},
		{"short UNA", "UNA:+", "UNA", 1, "", "not 9"},
		{"UNA release is a separator", strings.Replace(orders, "UNA:+.? '", "UNA:+.+ '", 1), "UNA", 1, "", "release character"},
		{"groups beside messages", strings.Replace(orders, "UNZ+1", "UNG+X+A+B+1+G+UN+D:96A'UNE+0+G'UNZ+1", 1), "UNG", 11, "", "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := edi.Parse([]byte(tc.body), edi.DefaultLimits)
			var malformed *edi.MalformedError
			require.ErrorAs(t, err, &malformed)
			require.Equal(t, tc.segment, malformed.Segment, "%v", err)
			require.Equal(t, tc.position, malformed.Position, "%v", err)
			require.Equal(t, tc.element, malformed.Element, "%v", err)
			require.Contains(t, malformed.Reason, tc.reason)
		})
	}
}

func TestParseLimitsMessages(t *testing.T) {
	t.Parallel()
	_, err := edi.Parse(read(t, "x12_850.edi"), edi.Limits{MaxMessages: 1})
	var tooMany *edi.TooManyMessagesError
	require.ErrorAs(t, err, &tooMany)
	require.Equal(t, 1, tooMany.Max)
	_, err = edi.Parse(read(t, "x12_850.edi"), edi.Limits{MaxMessages: 2})
	require.NoError(t, err)
}

func TestParseNotInterchange(t *testing.T) {
	t.Parallel()
	_, err := edi.Parse([]byte(`{"a":1}`), edi.DefaultLimits)
	require.True(t, errors.Is(err, edi.ErrNotInterchange))
	require.True(t, edi.LooksLikeInterchange([]byte("\r\n ISA*00")))
	require.True(t, edi.LooksLikeInterchange([]byte("UNB+UNOA")))
	require.False(t, edi.LooksLikeInterchange([]byte("hello")))
}

// isa is an ISA segment with the given separators, sender, control number
// and acknowledgment request, padded to its fixed widths.
func isa(element, component, terminator byte, sender, control string) string {
	e := string(element)
	return strings.Join([]string{"ISA", "00", strings.Repeat(" ", 10), "00", strings.Repeat(" ", 10),
		"ZZ", fmt.Sprintf("%-15s", sender), "ZZ", fmt.Sprintf("%-15s", "RECEIVER"), "261204", "0941", "U", "00401",
		control, "0", "P", string(component)}, e) + string(terminator)
}

func TestParseOtherSeparators(t *testing.T) {
	t.Parallel()
	body := isa('|', '^', '\n', "S", "000000001") + "GS|IN|S|R|20261204|0941|1|X|004010\nST|810|1\nBIG|20261204|INV-9|||A^B\nSE|3|1\nGE|1|1\nIEA|1|000000001\n"
	require.Len(t, isa('|', '^', '\n', "S", "000000001"), 106)
	ic, err := edi.Parse([]byte(body), edi.DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, "810", ic.Messages[0].Code)
	require.Equal(t, "INV-9", gjson.GetBytes(ic.Messages[0].View, "BIG.0.BIG02").String())
	require.JSONEq(t, `["A","B"]`, gjson.GetBytes(ic.Messages[0].View, "BIG.0.BIG05").Raw)
}
