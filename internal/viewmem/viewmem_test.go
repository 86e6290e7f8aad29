package viewmem

import "testing"

// Each piece Take hands out has room for exactly what was asked: writing
// past it reallocates instead of running into the next piece.
func TestPiecesDoNotOverlap(t *testing.T) {
	var m Memory
	sizes := []int{10, 1000, ChunkSize / 4, ChunkSize/4 + 1, 7, ChunkSize / 4, ChunkSize / 4, ChunkSize / 4, 3}
	pieces := make([][]byte, len(sizes))
	for i, n := range sizes {
		pieces[i] = m.Take(n)
		if len(pieces[i]) != 0 || cap(pieces[i]) != n {
			t.Fatalf("Take(%d) gave len %d cap %d", n, len(pieces[i]), cap(pieces[i]))
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
	m.Release()
	if m.chunks != nil || cap(m.rest) != 0 {
		t.Fatal("Release kept the chunks")
	}
}

// A nil Memory gives memory of its own, and releasing it does nothing.
func TestNilMemoryAllocates(t *testing.T) {
	var m *Memory
	if got := m.Take(5); len(got) != 0 || cap(got) != 5 {
		t.Fatalf("a nil Memory's Take gave len %d cap %d", len(got), cap(got))
	}
	m.Release()
}
