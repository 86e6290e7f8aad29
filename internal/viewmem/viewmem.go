// Package viewmem hands out the memory a parser writes one request's
// message views to, in chunks that are reused once the request is done.
//
// A view (and its canonical form) written to memory of its own for each
// message was the largest part of what a request of many messages
// allocated: 44 % of the bytes of make profile's x12-100 mix, and 30 % of
// packet-100's with each IDoc's own bytes. The runtime clears such memory
// before it is written, and it was garbage as soon as the messages were
// stored (docs/performance.md, "A request's views in reused memory").
package viewmem

import "sync"

// ChunkSize is the size of the chunks handed out: about twenty messages of
// 2 KiB, whose view and canonical form are each one to three times that.
const ChunkSize = 256 << 10

// chunks are the chunks of released requests. The pool lets the collector
// have those no request took back for two cycles.
var chunks = sync.Pool{New: func() any { return new([ChunkSize]byte) }}

// Memory is the memory of one request's views. Its zero value is ready to
// use. A piece of more than a quarter of a chunk gets memory of its own,
// so that no chunk is left mostly unused.
type Memory struct {
	chunks []*[ChunkSize]byte
	rest   []byte // the unused part of the last chunk, as an empty slice
}

// Take returns an empty slice with room for n bytes, which appending
// past reallocates. A nil m gives memory of its own: a view that outlives
// any request.
func (m *Memory) Take(n int) []byte {
	if m == nil || n > ChunkSize/4 {
		return make([]byte, 0, n)
	}
	if cap(m.rest) < n {
		c := chunks.Get().(*[ChunkSize]byte)
		m.chunks = append(m.chunks, c)
		m.rest = c[:0]
	}
	b := m.rest[:0:n]
	m.rest = m.rest[n:n]
	return b
}

// Release gives m's chunks back to be written over by later requests'
// views: nothing may read what Take handed out after it.
func (m *Memory) Release() {
	if m == nil {
		return
	}
	for _, c := range m.chunks {
		chunks.Put(c)
	}
	*m = Memory{}
}
