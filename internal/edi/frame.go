package edi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// frame is what a message's view is made of beside its own segments: the
// delimiters and character set they are read with, and the view's member
// "interchange". A message is stored with its segments and its frame, not
// its view, which is three times the segments' size (docs/performance.md,
// "Views rebuilt, not stored"); ViewOf rebuilds the view from the two.
// Separators are numbers, as any byte may be one.
type frame struct {
	Element     byte            `json:"element"`
	Component   byte            `json:"component"`
	Terminator  byte            `json:"terminator"`
	Release     byte            `json:"release,omitempty"`
	Charset     string          `json:"charset"`
	Interchange json.RawMessage `json:"interchange"`
}

// frameOf writes the frame of the messages read by sc under envelope.
// The envelope is kept byte for byte (no HTML escaping), so that the view
// rebuilt is the one made.
func frameOf(sc *scanner, envelope []byte) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(frame{
		Element: sc.element, Component: sc.component, Terminator: sc.terminator, Release: sc.release,
		Charset: sc.charset, Interchange: envelope,
	})
	if err != nil {
		panic(err) // an envelope of edihub's own writing is JSON
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// ViewOf rebuilds the view of a message from its segments as received
// (Message.Bytes) and its Message.Frame: the same view Parse made when the
// message arrived.
func ViewOf(segments, frameJSON []byte) ([]byte, error) {
	var f frame
	if err := json.Unmarshal(frameJSON, &f); err != nil {
		return nil, fmt.Errorf("read the frame of an interchange's message: %w", err)
	}
	if f.Charset == "" || len(f.Interchange) == 0 {
		return nil, errors.New("the frame of an interchange's message names no character set or no envelope")
	}
	sc := newScanner(segments, syntax{
		element: f.Element, component: f.Component, terminator: f.Terminator, release: f.Release,
		latin1: f.Charset == latin1Charset, charset: f.Charset,
	}, false)
	var v viewBuilder
	v.reset()
	for {
		raw, _, _, err := sc.next()
		if err != nil {
			return nil, err
		}
		if raw == nil {
			break
		}
		if err := v.add(sc, raw); err != nil {
			return nil, err
		}
	}
	if v.n == 0 {
		return nil, errors.New("an interchange's message holds no segment")
	}
	view, _ := v.json(nil, f.Interchange, nil)
	return view, nil
}
