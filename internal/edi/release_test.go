package edi_test

import (
	"bytes"
	"testing"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/edi"
)

// A released interchange's memory goes to the views of later ones: the
// views of an interchange still in use must never be among them, however
// many others are read and released meanwhile.
func TestReleasedViewsNeverOverwriteALiveInterchange(t *testing.T) {
	bodies := [][]byte{x12Interchange(60, 2048), edifactInterchange(60, 2048), x12Interchange(3, 300)}
	live := make([]*edi.Interchange, len(bodies))
	want := make([][][]byte, len(bodies))
	for i, body := range bodies {
		ic, err := edi.Parse(body, edi.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		live[i] = ic
		for _, m := range ic.Messages {
			want[i] = append(want[i], bytes.Clone(m.View), bytes.Clone(m.Canonical))
		}
	}
	for range 20 {
		for _, body := range bodies {
			ic, err := edi.Parse(body, edi.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			ic.Release()
		}
	}
	for i, ic := range live {
		for k, m := range ic.Messages {
			if !bytes.Equal(m.View, want[i][2*k]) || !bytes.Equal(m.Canonical, want[i][2*k+1]) {
				t.Fatalf("interchange %d, message %d: its view changed while others were read and released", i, k+1)
			}
			rebuilt, err := edi.ViewOf(m.Bytes, m.Frame)
			if err != nil || !bytes.Equal(rebuilt, m.View) {
				t.Fatalf("interchange %d, message %d: the view is not the one its segments make (%v)", i, k+1, err)
			}
			c, err := canon.Canonicalise(m.View)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(c.Bytes(), m.Canonical) {
				t.Fatalf("interchange %d, message %d: the canonical form is not the view's", i, k+1)
			}
			c.Release()
		}
	}
}

// Release clears the views it gives back, so that a caller reading one
// after it fails at once rather than reading another interchange's.
func TestReleaseClearsTheViews(t *testing.T) {
	ic, err := edi.Parse(x12Interchange(5, 500), edi.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	ic.Release()
	for _, m := range ic.Messages {
		if m.View != nil || m.Canonical != nil {
			t.Fatalf("message %d keeps its view after Release", m.Position)
		}
		if len(m.Bytes) == 0 || len(m.Frame) == 0 {
			t.Fatalf("message %d lost its segments or frame, which are not the views'", m.Position)
		}
	}
}
