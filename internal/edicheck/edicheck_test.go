package edicheck_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/edicheck"
)

const x12Original = "ISA*00*          *00*          *ZZ*ACMEBUYER      *ZZ*EDIHUBSELLER   *261204*0941*U*00401*000000905*1*P*>~\n" +
	"GS*PO*ACMEBUYER*EDIHUBSELLER*20261204*0941*905*X*004010~\nST*850*0001~\nBEG*00*SA*PO-4711**20261204~\nSE*3*0001~\n" +
	"GE*1*905~\nIEA*1*000000905~\n"

// A 997 written by hand from X12.5 and X12.6, then broken one rule at a
// time: the check must refuse each.
const x12Ack = "ISA*00*          *00*          *ZZ*EDIHUBSELLER   *ZZ*ACMEBUYER      *261204*1243*U*00401*000000042*0*P*>~\n" +
	"TA1*000000905*261204*0941*A*000~\nGS*FA*EDIHUBSELLER*ACMEBUYER*20261204*1243*42*X*004010~\nST*997*0001~\n" +
	"AK1*PO*905~\nAK2*850*0001~\nAK5*A~\nAK9*A*1*1*1~\nSE*6*0001~\nGE*1*42~\nIEA*1*000000042~\n"

func TestX12(t *testing.T) {
	t.Parallel()
	require.NoError(t, edicheck.X12([]byte(x12Ack), []byte(x12Original), false, ""))
	for broken, want := range map[string]string{
		"SE*6*0001":                       "SE*5*0001",
		"IEA*1*000000042":                 "IEA*1*000000043",
		"AK1*PO*905":                      "AK1*PO*906",
		"AK2*850*0001":                    "AK2*850*0002",
		"AK9*A*1*1*1":                     "AK9*A*2*1*1",
		"TA1*000000905":                   "TA1*000000906",
		"*ZZ*ACMEBUYER      *261204*1243": "*ZZ*ACMEBUYER     *261204*1243",
		"GS*FA":                           "GS*PO",
	} {
		bad := strings.Replace(x12Ack, broken, want, 1)
		require.NotEqual(t, x12Ack, bad, broken)
		require.Error(t, edicheck.X12([]byte(bad), []byte(x12Original), false, ""), "%s → %s", broken, want)
	}
	require.Error(t, edicheck.X12([]byte(x12Ack), []byte(x12Original), true, "025"), "accepting is not rejecting")
}

const edifactOriginal = "UNA:+.? '\nUNB+UNOC:3+5412345000013:14+4012345000009:14+261204:0941+IC0042++ORDERS'\n" +
	"UNH+M1+ORDERS:D:96A:UN'\nBGM+220+PO?+1+9'\nUNT+3+M1'\nUNZ+1+IC0042'\n"

const contrlAck = "UNA:+.? '\nUNB+UNOC:3+4012345000009:14+5412345000013:14+261204:1243+42'\nUNH+1+CONTRL:D:3:UN'\n" +
	"UCI+IC0042+5412345000013:14+4012345000009:14+7'\nUCM+M1+ORDERS:D:96A:UN+7'\nUNT+4+1'\nUNZ+1+42'\n"

func TestCONTRL(t *testing.T) {
	t.Parallel()
	require.NoError(t, edicheck.CONTRL([]byte(contrlAck), []byte(edifactOriginal), false, ""))
	for broken, want := range map[string]string{
		"UNT+4+1":       "UNT+5+1",
		"UNZ+1+42":      "UNZ+1+43",
		"UCI+IC0042":    "UCI+IC0043",
		"UCM+M1":        "UCM+M2",
		"UNOC:3":        "XXXX:3",
		":14+7'":        ":14+4'",
		"CONTRL:D:3:UN": "APERAK:D:3:UN",
		"4012345000009:14+5412345000013:14+261204": "5412345000013:14+4012345000009:14+261204",
	} {
		bad := strings.Replace(contrlAck, broken, want, 1)
		require.NotEqual(t, contrlAck, bad, broken)
		require.Error(t, edicheck.CONTRL([]byte(bad), []byte(edifactOriginal), false, ""), "%s → %s", broken, want)
	}
}
