package edi_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/edi"
)

var ackTime = time.Date(2026, 12, 4, 10, 30, 0, 0, time.UTC)

// A 997 answers each transaction set and the group, with a TA1 because
// ISA14 asks for one; it is itself a valid interchange, from the receiver
// back to the sender.
func TestAcknowledgeX12(t *testing.T) {
	t.Parallel()
	ic, err := edi.Parse(read(t, "x12_850.edi"), edi.DefaultLimits)
	require.NoError(t, err)
	ack := edi.Acknowledge(ic, 42, ackTime)
	require.Equal(t, "ISA*00*          *00*          *ZZ*EDIHUBSELLER   *ZZ*ACMEBUYER      *261204*1030*U*00401*000000042*0*P*>~\n"+
		"TA1*000000905*261204*0941*A*000~\n"+
		"GS*FA*EDIHUBSELLER*ACMEBUYER*20261204*1030*42*X*004010~\n"+
		"ST*997*0001~\nAK1*PO*905~\nAK2*850*0001~\nAK5*A~\nAK2*850*0002~\nAK5*A~\nAK9*A*2*2*2~\nSE*8*0001~\n"+
		"GE*1*42~\nIEA*1*000000042~\n", string(ack))
	back, err := edi.Parse(ack, edi.DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, "ZZ:EDIHUBSELLER", back.Sender)
	require.Equal(t, "ZZ:ACMEBUYER", back.Receiver)
	require.Equal(t, "997", back.Messages[0].Code)
	require.Equal(t, "A", gjson.GetBytes(back.Messages[0].View, "AK9.0.AK901").String())

	reject := edi.RejectReused(ic, 43, ackTime)
	require.Contains(t, string(reject), "TA1*000000905*261204*0941*R*025~")
	require.NotContains(t, string(reject), "ST*997")
}

// A CONTRL acknowledges the interchange and each message; it is itself a
// valid interchange.
func TestAcknowledgeEDIFACT(t *testing.T) {
	t.Parallel()
	ic, err := edi.Parse(read(t, "edifact_orders.edi"), edi.DefaultLimits)
	require.NoError(t, err)
	ack := edi.Acknowledge(ic, 7, ackTime)
	require.Equal(t, "UNA:+.? '\nUNB+UNOC:3+4012345000009:14+5412345000013:14+261204:1030+7'\n"+
		"UNH+1+CONTRL:D:3:UN'\nUCI+IC0042+5412345000013:14+4012345000009:14+7'\nUCM+M1+ORDERS:D:96A:UN+7'\n"+
		"UNT+4+1'\nUNZ+1+7'\n", string(ack))
	back, err := edi.Parse(ack, edi.DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, "CONTRL", back.Messages[0].Code)
	require.Equal(t, "IC0042", gjson.GetBytes(back.Messages[0].View, "UCI.0.UCI01").String())

	reject := edi.RejectReused(ic, 8, ackTime)
	require.Contains(t, string(reject), "UCI+IC0042+5412345000013:14+4012345000009:14+4+26'")
	_, err = edi.Parse(reject, edi.DefaultLimits)
	require.NoError(t, err)
}
