// Package storedview gives the JSON view of a stored message or blocked
// copy: the document its key paths, fingerprint and content hash read. A
// message received as JSON is stored as that payload, which is its view.
// One received as IDoc-XML, X12 or EDIFACT is stored as the bytes it came
// as, without its view (migration 040): the view is rebuilt from them, by
// the parser that made it when the message arrived, when a page needs it.
// Rows stored before that migration keep their views as payload.
package storedview

import (
	"errors"
	"mime"

	"github.com/lefia/edihub/internal/edi"
	"github.com/lefia/edihub/internal/idocxml"
)

// Stored is a stored message's columns that its view is read from.
type Stored struct {
	// Payload is the payload column: the view, or NULL (nil) when the
	// view is rebuilt from the received bytes.
	Payload     []byte
	ContentType string
	// Received is the whole of received_bytes when Payload is nil.
	Received []byte
	// Frame is edi_frame, which an X12 or EDIFACT message has.
	Frame []byte
}

// View returns the view of s.
func (s Stored) View() ([]byte, error) {
	switch {
	case s.Payload != nil:
		return s.Payload, nil
	case s.Received == nil:
		return nil, errors.New("the message is stored with neither its view nor the bytes it came as")
	case s.Frame != nil:
		return edi.ViewOf(s.Received, s.Frame)
	}
	// Only IDoc-XML is stored without a frame. Its charset is the content
	// type's, as when it arrived, which was read before it was stored.
	_, params, _ := mime.ParseMediaType(s.ContentType)
	return idocxml.ViewOf(s.Received, params["charset"])
}
