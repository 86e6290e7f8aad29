package edicheck

import (
	"fmt"
	"strconv"
	"strings"
)

// edifact is an EDIFACT interchange: its segments, each a list of data
// elements, each a list of components, with release characters removed.
type edifact struct {
	segments [][][]string
}

// readEDIFACT splits body by the service characters of its UNA, or by the
// defaults of ISO 9735 (: + . ? space ') without one, honouring the release
// character.
func readEDIFACT(body []byte) (edifact, error) {
	s := strings.TrimLeft(string(body), " \r\n\t")
	component, element, release, terminator := byte(':'), byte('+'), byte('?'), byte('\'')
	if strings.HasPrefix(s, "UNA") {
		if len(s) < 9 {
			return edifact{}, fmt.Errorf("UNA is 9 characters")
		}
		component, element, release, terminator = s[3], s[4], s[6], s[8]
		s = strings.TrimLeft(s[9:], "\r\n")
	}
	var out edifact
	var seg [][]string
	var el []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == release && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == component:
			el = append(el, cur.String())
			cur.Reset()
		case c == element:
			seg = append(seg, append(el, cur.String()))
			el, cur = nil, strings.Builder{}
		case c == terminator:
			seg = append(seg, append(el, cur.String()))
			out.segments = append(out.segments, seg)
			seg, el, cur = nil, nil, strings.Builder{}
			for i+1 < len(s) && (s[i+1] == '\r' || s[i+1] == '\n') {
				i++
			}
		default:
			cur.WriteByte(c)
		}
	}
	if strings.TrimSpace(cur.String()) != "" || len(seg) > 0 {
		return edifact{}, fmt.Errorf("the interchange does not end with a segment terminator")
	}
	if len(out.segments) < 2 || out.segments[0][0][0] != "UNB" {
		return edifact{}, fmt.Errorf("an EDIFACT interchange starts with UNB, after an optional UNA")
	}
	return out, nil
}

// get is component c of element e of seg, "" when absent.
func get(seg [][]string, e, c int) string {
	if e < len(seg) && c < len(seg[e]) {
		return seg[e][c]
	}
	return ""
}

// party is an interchange sender or recipient as ID:qualifier.
func party(seg [][]string, e int) string { return get(seg, e, 0) + ":" + get(seg, e, 1) }

// CONTRL checks ack, the CONTRL interchange acknowledging the EDIFACT
// interchange original (ISO 9735 and the CONTRL message, D:3): its UNB from
// original's recipient back to its sender in a syntax level UNOA to UNOY;
// UNZ counting its messages and repeating UNB 0020; one CONTRL message
// whose UNT counts its segments and repeats UNH 0062; a UCI naming
// original's reference, sender and recipient with action 7 (acknowledged)
// or, rejected, 4 with syntax error code; and, when accepted, a UCM per
// message of original naming its reference and type.
func CONTRL(ack, original []byte, rejected bool, code string) error {
	a, err := readEDIFACT(ack)
	if err != nil {
		return fmt.Errorf("acknowledgment: %w", err)
	}
	o, err := readEDIFACT(original)
	if err != nil {
		return fmt.Errorf("original: %w", err)
	}
	unb, ounb := a.segments[0], o.segments[0]
	if level := get(unb, 1, 0); len(level) != 4 || !strings.HasPrefix(level, "UNO") || level[3] < 'A' || level[3] > 'Y' {
		return fmt.Errorf("UNB syntax identifier %q is not UNOA to UNOY", level)
	}
	if party(unb, 2) != party(ounb, 3) || party(unb, 3) != party(ounb, 2) {
		return fmt.Errorf("UNB from %s to %s, want the original's recipient back to its sender", party(unb, 2), party(unb, 3))
	}
	if !digits(get(unb, 4, 0), 6) || !digits(get(unb, 4, 1), 4) || get(unb, 5, 0) == "" {
		return fmt.Errorf("UNB lacks its date, time or control reference: %v", unb)
	}
	unz := a.segments[len(a.segments)-1]
	var messages, segments int
	var unh [][]string
	var body [][][]string
	for _, s := range a.segments[1 : len(a.segments)-1] {
		switch s[0][0] {
		case "UNH":
			unh, segments = s, 0
			messages++
			body = nil
		}
		segments++
		body = append(body, s)
		if s[0][0] == "UNT" {
			if unh == nil || get(s, 1, 0) != strconv.Itoa(segments) || get(s, 2, 0) != get(unh, 1, 0) {
				return fmt.Errorf("UNT %v does not close UNH %v of %d segments", s, unh, segments)
			}
		}
	}
	if unz[0][0] != "UNZ" || get(unz, 1, 0) != strconv.Itoa(messages) || get(unz, 2, 0) != get(unb, 5, 0) {
		return fmt.Errorf("UNZ %v, want %d messages and UNB 0020 %s", unz, messages, get(unb, 5, 0))
	}
	if messages != 1 || get(unh, 2, 0) != "CONTRL" || get(unh, 2, 3) != "UN" {
		return fmt.Errorf("want one CONTRL message, got %d, UNH %v", messages, unh)
	}
	uci := body[1]
	if uci[0][0] != "UCI" || get(uci, 1, 0) != get(ounb, 5, 0) || party(uci, 2) != party(ounb, 2) || party(uci, 3) != party(ounb, 3) {
		return fmt.Errorf("UCI %v does not name the original interchange %s from %s to %s", uci, get(ounb, 5, 0), party(ounb, 2), party(ounb, 3))
	}
	if rejected {
		if get(uci, 4, 0) != "4" || get(uci, 5, 0) != code {
			return fmt.Errorf("UCI action %s, error %s; want 4 (rejected) and %s", get(uci, 4, 0), get(uci, 5, 0), code)
		}
		return nil
	}
	if get(uci, 4, 0) != "7" {
		return fmt.Errorf("UCI action %s, want 7: acknowledged", get(uci, 4, 0))
	}
	var want [][2]string
	for _, s := range o.segments {
		if s[0][0] == "UNH" {
			want = append(want, [2]string{get(s, 1, 0), get(s, 2, 0)})
		}
	}
	var ucm [][][]string
	for _, s := range body {
		if s[0][0] == "UCM" {
			ucm = append(ucm, s)
		}
	}
	if len(ucm) != len(want) {
		return fmt.Errorf("%d UCM for %d messages", len(ucm), len(want))
	}
	for i, w := range want {
		if get(ucm[i], 1, 0) != w[0] || get(ucm[i], 2, 0) != w[1] || get(ucm[i], 3, 0) != "7" {
			return fmt.Errorf("UCM %v, want message %s of type %s acknowledged (7)", ucm[i], w[0], w[1])
		}
	}
	return nil
}
