package idocxml_test

import (
	"bytes"
	"testing"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/idocxml"
	"github.com/lefia/edihub/internal/loadgen"
)

// A released document's memory goes to the views and own documents of
// later ones: those of a document still in use, and a view rebuilt by
// ViewOf, must never be among them, however many others are read and
// released meanwhile.
func TestReleasedViewsNeverOverwriteALiveDocument(t *testing.T) {
	body := loadgen.Packet(40, 2048, 1)
	doc, err := idocxml.Parse(body, "", idocxml.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var views, canonicals, owns [][]byte
	for _, idoc := range doc.IDocs {
		own := doc.Own(body, idoc)
		views, canonicals, owns = append(views, bytes.Clone(idoc.View)), append(canonicals, bytes.Clone(idoc.Canonical)), append(owns, own)
	}
	wantOwns := make([][]byte, len(owns))
	for i, own := range owns {
		wantOwns[i] = bytes.Clone(own)
	}
	rebuilt, err := idocxml.ViewOf(owns[0], "")
	if err != nil {
		t.Fatal(err)
	}
	wantRebuilt := bytes.Clone(rebuilt)
	for round := range 20 {
		other, err := idocxml.Parse(loadgen.Packet(40, 2048, uint64(100*round+200)), "", idocxml.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		for _, idoc := range other.IDocs {
			_ = other.Own(body, idoc)
		}
		other.Release()
	}
	if !bytes.Equal(rebuilt, wantRebuilt) {
		t.Fatal("a view rebuilt by ViewOf changed as other documents were read and released")
	}
	for i, idoc := range doc.IDocs {
		if !bytes.Equal(idoc.View, views[i]) || !bytes.Equal(idoc.Canonical, canonicals[i]) || !bytes.Equal(owns[i], wantOwns[i]) {
			t.Fatalf("IDoc %d: its view or own document changed while others were read and released", i+1)
		}
		c, err := canon.Canonicalise(idoc.View)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.Bytes(), idoc.Canonical) {
			t.Fatalf("IDoc %d: the canonical form is not the view's", i+1)
		}
		c.Release()
		again, err := idocxml.ViewOf(owns[i], "")
		if err != nil || !bytes.Equal(again, idoc.View) {
			t.Fatalf("IDoc %d: its own document does not make its view again (%v)", i+1, err)
		}
	}
	doc.Release()
	for _, idoc := range doc.IDocs {
		if idoc.View != nil || idoc.Canonical != nil {
			t.Fatalf("IDoc %d keeps its view after Release", idoc.Position)
		}
	}
}
