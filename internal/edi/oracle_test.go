package edi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// oracleOccurrence is how the view wrote an occurrence before it was
// written straight from the segment's bytes: from the segment split into a
// string for each component, leaving out its empty trailing elements.
func oracleOccurrence(b []byte, s *segment) []byte {
	last := len(s.elements) - 1
	for last > 0 && isEmpty(s.elements[last]) {
		last--
	}
	b = append(b, '{')
	for i := 1; i <= last; i++ {
		if i > 1 {
			b = append(b, ',')
		}
		b = appendString(b, elementName(s.id, i))
		b = append(b, ':')
		components := s.elements[i]
		if len(components) == 1 {
			b = appendString(b, components[0])
			continue
		}
		b = append(b, '[')
		for j, c := range components {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, c)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func isEmpty(components []string) bool {
	for _, c := range components {
		if c != "" {
			return false
		}
	}
	return true
}

// FuzzOccurrenceMatchesSplit holds the view's writer to the segment as
// split reads it: for any segment and separators, the same occurrence, or
// the same error.
func FuzzOccurrenceMatchesSplit(f *testing.F) {
	f.Add([]byte("PO1*1*12*EA*9.95**BP*ABC-100>RED"), byte('*'), byte('>'), byte(0), false)
	f.Add([]byte("N1*ST*\"A\\B\"\t*92**>*"), byte('*'), byte('>'), byte(0), false)
	f.Add([]byte("NAD+BY+5412345000013::9++M\xfcller?+Co?:?'?"), byte('+'), byte(':'), byte('?'), true)
	f.Add([]byte("FTX+AAI+++a?"), byte('+'), byte(':'), byte('?'), true)
	f.Add([]byte("FTX+AAI+x\x00y"), byte('+'), byte(':'), byte('?'), true)
	f.Add([]byte("FTX+AAI+x\x00y"), byte('+'), byte(':'), byte('?'), false)
	f.Add([]byte("B+\xff"), byte('+'), byte(':'), byte(0), false)
	f.Add([]byte("BEG"), byte('*'), byte('>'), byte(0), false)
	f.Add([]byte("BEG*::*"), byte('*'), byte(':'), byte(0), false)
	f.Add([]byte("1EG*a"), byte('*'), byte('>'), byte(0), false)
	f.Add([]byte("BEGX*a"), byte('*'), byte('>'), byte(0), false)
	f.Fuzz(func(t *testing.T, raw []byte, element, component, release byte, latin1 bool) {
		if element == component || release != 0 && (release == element || release == component) {
			return // refused with the interchange's header
		}
		sc := newScanner(nil, syntax{element: element, component: component, terminator: '~', release: release,
			latin1: latin1, charset: "UTF-8"}, false)
		sc.n = 7
		var v viewBuilder
		v.reset()
		err := v.add(sc, raw)
		s, splitErr := sc.split(raw, true)
		if splitErr != nil {
			require.Equal(t, splitErr, err)
			return
		}
		require.NoError(t, err)
		require.Equal(t, string(oracleOccurrence(nil, s)), string(v.members[0].occurrences))
	})
}

// FuzzTerminatorMatchesReading holds terminatorFrom to reading the body a
// byte at a time, where a release character makes the byte after it data.
func FuzzTerminatorMatchesReading(f *testing.F) {
	f.Add([]byte("A?'B??'C"), byte('\''), byte('?'))
	f.Add([]byte("?'?'???'"), byte('\''), byte('?'))
	f.Add([]byte("BEG*00~REF*~"), byte('~'), byte(0))
	f.Fuzz(func(t *testing.T, body []byte, terminator, release byte) {
		if release == terminator {
			return // refused with the interchange's header
		}
		sc := newScanner(body, syntax{element: '+', component: ':', terminator: terminator, release: release}, false)
		for start := 0; start <= len(body); start++ {
			want := -1
			for i := start; i < len(body); i++ {
				if release != 0 && body[i] == release {
					i++ // the byte after it is data
					continue
				}
				if body[i] == terminator {
					want = i
					break
				}
			}
			require.Equal(t, want, sc.terminatorFrom(start), "from %d", start)
		}
	})
}
