package edi_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/lefia/edihub/internal/edi"
)

// x12Interchange is an X12 interchange of n 850 transaction sets of about
// setSize bytes each: a BEG, a reference and a party, then PO1 lines.
func x12Interchange(n, setSize int) []byte {
	var x bytes.Buffer
	x.WriteString("ISA*00*          *00*          *ZZ*ACMEBUYER      *ZZ*EDIHUBSELLER   *261204*0941*U*00401*000000001*0*P*>~\n")
	x.WriteString("GS*PO*ACMEBUYER*EDIHUBSELLER*20261204*0941*1*X*004010~\n")
	for i := range n {
		start := x.Len()
		fmt.Fprintf(&x, "ST*850*%04d~\nBEG*00*SA*PO-%06d**20261204~\nREF*DP*038~\nN1*ST*ACME Distribution Center*92*0042~\n", i+1, i+1)
		lines := 0
		for x.Len()-start < setSize-40 {
			lines++
			fmt.Fprintf(&x, "PO1*%d*12*EA*9.95**BP*ABC-%06d>RED~\n", lines, lines)
		}
		fmt.Fprintf(&x, "CTT*%d~\nSE*%d*%04d~\n", lines, lines+6, i+1)
	}
	fmt.Fprintf(&x, "GE*%d*1~\nIEA*1*000000001~\n", n)
	return x.Bytes()
}

// edifactInterchange is an EDIFACT interchange of n ORDERS messages of
// about messageSize bytes each, in UNOC (ISO-8859-1), with release
// characters: a BGM, a date and a party, then LIN and QTY lines.
func edifactInterchange(n, messageSize int) []byte {
	var x bytes.Buffer
	x.WriteString("UNA:+.? '\nUNB+UNOC:3+5412345000013:14+4012345000009:14+261204:0941+IC0042++ORDERS'\n")
	for i := range n {
		start := x.Len()
		fmt.Fprintf(&x, "UNH+M%d+ORDERS:D:96A:UN'\nBGM+220+PO?+%06d+9'\nDTM+137:20261204:102'\nNAD+BY+5412345000013::9++M\xfcller GmbH'\n", i+1, i+1)
		segments := 4
		for x.Len()-start < messageSize-20 {
			segments += 2
			fmt.Fprintf(&x, "LIN+%d++4000862%06d:SRS'\nQTY+21:12'\n", segments/2, segments)
		}
		fmt.Fprintf(&x, "UNS+S'\nUNT+%d+M%d'\n", segments+2, i+1)
	}
	fmt.Fprintf(&x, "UNZ+%d+IC0042'\n", n)
	return x.Bytes()
}

// BenchmarkParseInterchange reads interchanges of 100 messages of about
// 2 KiB each, as the batch and packet rows of make bench carry: what an
// interchange's reading and JSON views cost. Each is released when read, as
// the server releases an interchange once its messages are decided.
func BenchmarkParseInterchange(b *testing.B) {
	for _, form := range []struct {
		name string
		body []byte
	}{
		{"x12", x12Interchange(100, 2048)},
		{"edifact", edifactInterchange(100, 2048)},
	} {
		b.Run(form.name, func(b *testing.B) {
			b.SetBytes(int64(len(form.body)))
			b.ReportAllocs()
			for b.Loop() {
				ic, err := edi.Parse(form.body, edi.DefaultLimits)
				if err != nil || len(ic.Messages) != 100 {
					b.Fatal(err)
				}
				ic.Release()
			}
		})
	}
}

// BenchmarkAcknowledge writes the acknowledgment of an interchange of 100
// messages, as every new interchange's answer carries it.
func BenchmarkAcknowledge(b *testing.B) {
	now := time.Date(2026, 12, 4, 9, 41, 0, 0, time.UTC)
	for _, form := range []struct {
		name string
		body []byte
	}{
		{"x12", x12Interchange(100, 2048)},
		{"edifact", edifactInterchange(100, 2048)},
	} {
		ic, err := edi.Parse(form.body, edi.DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(form.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(edi.Acknowledge(ic, 1, now)) == 0 {
					b.Fatal("no acknowledgment")
				}
			}
		})
	}
}
