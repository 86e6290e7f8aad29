package edi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/edi"
	"github.com/lefia/edihub/internal/edicheck"
)

// Every sample's acknowledgment, and the one that rejects a reused control
// number, follows the X12 and EDIFACT rules as internal/edicheck reads
// them, which shares no code with the writer.
func TestAcknowledgmentsFollowTheStandards(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 9, 41, 0, 0, time.UTC)
	for _, name := range []string{"x12_850", "x12_850_new_control_number", "x12_810", "x12_810_new_control_number",
		"edifact_orders", "edifact_orders_new_control_number", "edifact_invoic", "edifact_invoic_new_control_number"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join("..", "..", "docs", "samples", name+".edi"))
			require.NoError(t, err)
			ic, err := edi.Parse(body, edi.DefaultLimits)
			require.NoError(t, err)
			check, code := edicheck.X12, "025"
			if strings.HasPrefix(name, "edifact") {
				check, code = edicheck.CONTRL, "26"
			}
			require.NoError(t, check(edi.Acknowledge(ic, 42, now), body, false, ""))
			require.NoError(t, check(edi.RejectReused(ic, 999999999, now), body, true, code))
		})
	}
}
