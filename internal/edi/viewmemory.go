package edi

import "sync"

// viewChunkSize is the size of the chunks an interchange's views are
// written to: about twenty messages of 2 KiB of segments, whose view and
// canonical form are each about three times that.
const viewChunkSize = 256 << 10

// viewChunks are the chunks of released interchanges. A view allocated
// for each message was the largest part of what an interchange's request
// allocated (44 % of its bytes in make profile's x12-100 mix), all of it
// cleared by the runtime before it was written and garbage once the
// messages were stored; docs/performance.md, "An interchange's views in
// reused memory".
var viewChunks = sync.Pool{New: func() any { return new([viewChunkSize]byte) }}

// viewMemory hands out the memory of one interchange's views, from chunks
// it gives back when the interchange is released (Interchange.Release). A
// view of more than a quarter of a chunk gets memory of its own, so that
// no chunk is left mostly unused.
type viewMemory struct {
	chunks []*[viewChunkSize]byte
	rest   []byte // the unused part of the last chunk, as an empty slice
}

// take returns an empty slice with room for n bytes, of memory of its own
// when m is nil: a view that outlives its interchange (ViewOf's).
func (m *viewMemory) take(n int) []byte {
	if m == nil || n > viewChunkSize/4 {
		return make([]byte, 0, n)
	}
	if cap(m.rest) < n {
		c := viewChunks.Get().(*[viewChunkSize]byte)
		m.chunks = append(m.chunks, c)
		m.rest = c[:0]
	}
	b := m.rest[:0:n]
	m.rest = m.rest[n:n]
	return b
}

// release gives the chunks back for the next interchange's views.
func (m *viewMemory) release() {
	for _, c := range m.chunks {
		viewChunks.Put(c)
	}
	*m = viewMemory{}
}
