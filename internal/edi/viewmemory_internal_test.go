package edi

import "testing"

// Each piece take hands out has room for exactly what was asked: writing
// past it reallocates instead of running into the next piece.
func TestViewMemoryPiecesDoNotOverlap(t *testing.T) {
	var m viewMemory
	sizes := []int{10, 1000, viewChunkSize / 4, viewChunkSize/4 + 1, 7, viewChunkSize / 4, viewChunkSize / 4, viewChunkSize / 4, 3}
	pieces := make([][]byte, len(sizes))
	for i, n := range sizes {
		pieces[i] = m.take(n)
		if len(pieces[i]) != 0 || cap(pieces[i]) != n {
			t.Fatalf("take(%d) gave len %d cap %d", n, len(pieces[i]), cap(pieces[i]))
		}
		for range n {
			pieces[i] = append(pieces[i], byte(i))
		}
	}
	for i, p := range pieces {
		for _, c := range p {
			if c != byte(i) {
				t.Fatalf("piece %d of %d bytes was written over", i, sizes[i])
			}
		}
	}
	grown := append(pieces[0], 'x')
	if &grown[0] == &pieces[0][0] {
		t.Fatal("appending past a piece wrote into its chunk")
	}
	if len(m.chunks) != 2 {
		t.Fatalf("%d chunks for pieces that fit two", len(m.chunks))
	}
	m.release()
	if m.chunks != nil || cap(m.rest) != 0 {
		t.Fatal("release kept the chunks")
	}
	if got := (*viewMemory)(nil).take(5); cap(got) != 5 {
		t.Fatalf("a nil memory's take gave cap %d", cap(got))
	}
}
