package edi_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/edi"
)

// A message is stored as its segments and its frame: the view rebuilt from
// them is, byte for byte, the view the interchange was read with, whatever
// its separators, release character, character set or group.
func TestViewRebuiltFromBytesAndFrame(t *testing.T) {
	t.Parallel()
	bodies := map[string][]byte{
		"x12 with line breaks": read(t, "x12_850.edi"),
		// PO?+4711: the release character escapes a separator.
		"edifact with UNA":             read(t, "edifact_orders.edi"),
		"edifact latin1 in two groups": read(t, "edifact_invoic_groups.edi"),
		"x12 with other separators": []byte(isa('|', '^', '\n', "S", "000000001") +
			"GS|IN|S|R|20261204|0941|1|X|004010\nST|810|1\nBIG|20261204|INV-9|||A^B\nSE|3|1\nGE|1|1\nIEA|1|000000001\n"),
		"x12 with a tab": []byte(strings.Replace(string(read(t, "x12_850.edi")), "PO-4711", "PO\t<4711>", 1)),
		"x12 of 20":      x12Interchange(20, 600),
		"edifact of 20":  edifactInterchange(20, 600),
	}
	for name, body := range bodies {
		ic, err := edi.Parse(body, edi.DefaultLimits)
		require.NoError(t, err, name)
		for _, m := range ic.Messages {
			view, err := edi.ViewOf(m.Bytes, m.Frame)
			require.NoError(t, err, name)
			require.Equal(t, string(m.View), string(view), "%s, message %d", name, m.Position)
		}
	}
}

func TestViewOfRefusesWhatIsNoMessage(t *testing.T) {
	t.Parallel()
	ic, err := edi.Parse(read(t, "x12_850.edi"), edi.DefaultLimits)
	require.NoError(t, err)
	m := ic.Messages[0]
	for name, c := range map[string]struct{ segments, frame string }{
		"frame not JSON":    {string(m.Bytes), "{"},
		"frame without all": {string(m.Bytes), `{"element":42}`},
		"no segments":       {"", string(m.Frame)},
		"cut short":         {strings.TrimSuffix(string(m.Bytes), "~"), string(m.Frame)},
	} {
		_, err := edi.ViewOf([]byte(c.segments), []byte(c.frame))
		require.Error(t, err, name)
	}
}
