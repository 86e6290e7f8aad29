package edi_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/edi"
)

// The samples of docs/samples hold, for each document, the interchange, a
// resend of it (the same segments, other line breaks), the same document
// under a new control number, and a broken variant, each of which reads as
// its name says.
func TestSamples(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "docs", "samples")
	for _, base := range []string{"x12_850", "x12_810", "edifact_orders", "edifact_invoic"} {
		t.Run(base, func(t *testing.T) {
			t.Parallel()
			parse := func(name string) (*edi.Interchange, error) {
				body, err := os.ReadFile(filepath.Join(dir, name+".edi"))
				require.NoError(t, err)
				return edi.Parse(body, edi.DefaultLimits)
			}
			first, err := parse(base)
			require.NoError(t, err)
			resend, err := parse(base + "_resend")
			require.NoError(t, err)
			require.Equal(t, first.ContentHash, resend.ContentHash)
			require.Equal(t, first.ControlNumber, resend.ControlNumber)
			renumbered, err := parse(base + "_new_control_number")
			require.NoError(t, err)
			require.NotEqual(t, first.ControlNumber, renumbered.ControlNumber)
			key := "BEG.0.BEG03"
			switch {
			case strings.HasSuffix(base, "810"):
				key = "BIG.0.BIG02"
			case strings.HasPrefix(base, "edifact"):
				key = "BGM.0.BGM02"
			}
			value := gjson.GetBytes(first.Messages[0].View, key).String()
			require.NotEmpty(t, value)
			require.Equal(t, value, gjson.GetBytes(renumbered.Messages[0].View, key).String())
			_, err = parse(base + "_broken")
			var malformed *edi.MalformedError
			require.True(t, errors.As(err, &malformed), "%v", err)
		})
	}
}
