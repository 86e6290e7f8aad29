package edi

import (
	"fmt"
	"strings"
	"time"
)

// Acknowledge writes the acknowledgment of ic, accepted: an X12 interchange
// holding a TA1 when ISA14 asked for one and a 997 per functional group
// (AK1, AK2 and AK5 per transaction set, AK9), or an EDIFACT interchange
// holding a CONTRL message (UCI, and UCM per message). It goes from ic's
// receiver back to its sender, under edihub's control number control.
func Acknowledge(ic *Interchange, control int64, now time.Time) []byte {
	if ic.Standard == X12 {
		return x12Ack(ic, control, now, false)
	}
	return contrl(ic, control, now, false)
}

// RejectReused writes the acknowledgment that rejects ic because its
// control number was used before for other content: a TA1 with TA104 R and
// TA105 025 (duplicate interchange control number), or a CONTRL whose UCI
// rejects the interchange with syntax error 26 (duplicate detected).
func RejectReused(ic *Interchange, control int64, now time.Time) []byte {
	if ic.Standard == X12 {
		return x12Ack(ic, control, now, true)
	}
	return contrl(ic, control, now, true)
}

// x12Writer writes segments with the separators of the interchange
// acknowledged.
type x12Writer struct {
	b        strings.Builder
	env      envelopeFields
	segments int // since the last ST
}

func (w *x12Writer) segment(elements ...string) {
	w.b.WriteString(strings.Join(elements, string(w.env.element)))
	w.b.WriteByte(w.env.terminator)
	w.b.WriteByte('\n')
	w.segments++
}

func x12Ack(ic *Interchange, control int64, now time.Time, reject bool) []byte {
	w := &x12Writer{env: ic.env}
	number := fmt.Sprintf("%09d", control)
	usage := "P"
	if ic.Test {
		usage = "T"
	}
	w.segment("ISA", "00", strings.Repeat(" ", 10), "00", strings.Repeat(" ", 10),
		ic.env.receiverQualifier, pad(ic.env.receiverID, 15),
		ic.env.senderQualifier, pad(ic.env.senderID, 15),
		now.Format("060102"), now.Format("1504"), "U", "00401", number, "0", usage, string(ic.env.component))
	if ic.AckRequested || reject {
		status, note := "A", "000"
		if reject {
			status, note = "R", "025"
		}
		w.segment("TA1", ic.ControlNumber, ic.env.date, ic.env.time, status, note)
	}
	groups := 0
	if !reject {
		groups = 1
		first := ic.Groups[0]
		version := first.Version
		if version == "" {
			version = "004010"
		}
		w.segment("GS", "FA", first.AppReceiver, first.AppSender, now.Format("20060102"), now.Format("1504"),
			fmt.Sprint(control), "X", version)
		position := 0
		for i, g := range ic.Groups {
			setNumber := fmt.Sprintf("%04d", i+1)
			w.segments = 0
			w.segment("ST", "997", setNumber)
			w.segment("AK1", g.ID, g.ControlNumber)
			for range g.Messages {
				m := ic.Messages[position]
				position++
				w.segment("AK2", m.Code, m.Docnum)
				w.segment("AK5", "A")
			}
			n := fmt.Sprint(g.Messages)
			w.segment("AK9", "A", n, n, n)
			w.segment("SE", fmt.Sprint(w.segments+1), setNumber)
		}
		w.segment("GE", fmt.Sprint(len(ic.Groups)), fmt.Sprint(control))
	}
	w.segment("IEA", fmt.Sprint(groups), number)
	return []byte(w.b.String())
}

// pad fills s with spaces to n bytes, the width of an ISA element (fmt
// would count characters).
func pad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat(" ", n-len(s))
}

// edifactEscaper escapes the separators and the release character of the
// default UNA, which acknowledgments are written with. It is made once:
// building a Replacer for each value cost an acknowledgment of 100
// messages about 2 ms and 3.5 MB (BenchmarkAcknowledge), a tenth of
// edihub's CPU for EDIFACT interchanges.
var edifactEscaper = strings.NewReplacer("?", "??", "+", "?+", ":", "?:", "'", "?'")

// edifactValue escapes s for an acknowledgment.
func edifactValue(s string) string { return edifactEscaper.Replace(s) }

// edifactComposite joins the escaped components, leaving out empty ones at
// the end.
func edifactComposite(components ...string) string {
	for len(components) > 1 && components[len(components)-1] == "" {
		components = components[:len(components)-1]
	}
	escaped := make([]string, len(components))
	for i, c := range components {
		escaped[i] = edifactValue(c)
	}
	return strings.Join(escaped, ":")
}

func contrl(ic *Interchange, control int64, now time.Time, reject bool) []byte {
	var b strings.Builder
	segments := 0
	segment := func(elements ...string) {
		b.WriteString(strings.Join(elements, "+"))
		b.WriteString("'\n")
		segments++
	}
	syntax := ic.env.syntax
	if syntax == "" {
		syntax = "UNOC:3"
	}
	date := now.Format("060102")
	if strings.HasSuffix(syntax, ":4") {
		date = now.Format("20060102")
	}
	number := fmt.Sprint(control)
	b.WriteString("UNA:+.? '\n")
	segment("UNB", syntax, edifactComposite(ic.env.receiverID, ic.env.receiverQualifier),
		edifactComposite(ic.env.senderID, ic.env.senderQualifier), date+":"+now.Format("1504"), number)
	segments = 0
	segment("UNH", "1", "CONTRL:D:3:UN")
	uci := []string{"UCI", edifactValue(ic.ControlNumber), edifactComposite(ic.env.senderID, ic.env.senderQualifier),
		edifactComposite(ic.env.receiverID, ic.env.receiverQualifier)}
	if reject {
		// 4: this level and all lower levels rejected; 26: duplicate detected.
		segment(append(uci, "4", "26")...)
	} else {
		// 7: this level and all lower levels acknowledged.
		segment(append(uci, "7")...)
		for _, m := range ic.Messages {
			version := strings.SplitN(m.Version, ":", 2)
			for len(version) < 2 {
				version = append(version, "")
			}
			segment("UCM", edifactValue(m.Docnum), edifactComposite(m.Code, version[0], version[1], "UN"), "7")
		}
	}
	segment("UNT", fmt.Sprint(segments+1), "1")
	segment("UNZ", "1", number)
	if cs, known := charsets[ic.env.syntaxID()]; known && cs.latin1 {
		return latin1(b.String())
	}
	return []byte(b.String())
}

// latin1 encodes s, whose characters all came from ISO-8859-1 text, in
// ISO-8859-1.
func latin1(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}
