// Package edicheck checks X12 997 and TA1 and EDIFACT CONTRL
// acknowledgments against the standards' rules and against the interchange
// they acknowledge, for tests only. It shares no code with internal/edi,
// which writes them: a mistake in edihub's reading of the syntax would
// otherwise pass its own check. No maintained Go module parses X12 or
// EDIFACT, and the npm parsers would bring Node into every test run to
// read what this reads in a page (see the README's EDI section).
package edicheck

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// x12 is an X12 interchange split by the separators its ISA defines.
type x12 struct {
	segments [][]string
}

// readX12 splits body by the separators at ISA's fixed positions: the
// element separator is byte 3, the component separator byte 104 and the
// segment terminator byte 105 (X12.5, the interchange control structure).
func readX12(body []byte) (x12, error) {
	s := strings.TrimLeft(string(body), " \r\n\t")
	if len(s) < 106 || !strings.HasPrefix(s, "ISA") {
		return x12{}, fmt.Errorf("an X12 interchange starts with an ISA of 106 characters")
	}
	element, terminator := s[3], s[105]
	var out x12
	for _, seg := range strings.Split(s, string(terminator)) {
		seg = strings.Trim(seg, "\r\n")
		if seg == "" {
			continue
		}
		out.segments = append(out.segments, strings.Split(seg, string(element)))
	}
	isa := out.segments[0]
	if len(isa) != 17 {
		return x12{}, fmt.Errorf("ISA has %d elements, want 16", len(isa)-1)
	}
	for i, width := range []int{2, 10, 2, 10, 2, 15, 2, 15, 6, 4, 1, 5, 9, 1, 1, 1} {
		if len(isa[i+1]) != width {
			return x12{}, fmt.Errorf("ISA%02d is %q, %d characters wide, want %d", i+1, isa[i+1], len(isa[i+1]), width)
		}
	}
	return out, nil
}

func (x x12) find(id string) [][]string {
	var out [][]string
	for _, s := range x.segments {
		if s[0] == id {
			out = append(out, s)
		}
	}
	return out
}

func element(seg []string, i int) string {
	if i < len(seg) {
		return seg[i]
	}
	return ""
}

func digits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := strconv.Atoi(s)
	return err == nil
}

// X12 checks ack, the acknowledgment of the X12 interchange original: its
// envelope (ISA and IEA, GS and GE, ST and SE: counts and control numbers
// matching), addressed from original's receiver back to its sender; a TA1
// naming original's ISA13 when ISA14 asked for one, or when it rejects;
// and, unless it rejects the interchange, a 997 per functional group with
// an AK1 naming the group, an AK2 and AK5 per transaction set, and an AK9
// whose counts match. rejected says the acknowledgment must reject the
// interchange (TA104 R) with TA105 code.
func X12(ack, original []byte, rejected bool, code string) error {
	a, err := readX12(ack)
	if err != nil {
		return fmt.Errorf("acknowledgment: %w", err)
	}
	o, err := readX12(original)
	if err != nil {
		return fmt.Errorf("original: %w", err)
	}
	isa, oisa := a.segments[0], o.segments[0]
	if isa[5] != oisa[7] || isa[6] != oisa[8] || isa[7] != oisa[5] || isa[8] != oisa[6] {
		return fmt.Errorf("ISA05-08 %s:%s to %s:%s, want the original's receiver back to its sender", isa[5], isa[6], isa[7], isa[8])
	}
	if err := envelopeX12(a); err != nil {
		return err
	}
	ta1 := a.find("TA1")
	wantTA1 := oisa[14] == "1" || rejected
	switch {
	case wantTA1 && len(ta1) != 1:
		return fmt.Errorf("%d TA1 segments, want 1 (ISA14 %s)", len(ta1), oisa[14])
	case !wantTA1 && len(ta1) != 0:
		return fmt.Errorf("a TA1 that ISA14 0 did not ask for")
	case len(ta1) == 1:
		t := ta1[0]
		if element(t, 1) != oisa[13] || !digits(element(t, 2), 6) || !digits(element(t, 3), 4) {
			return fmt.Errorf("TA1 %v does not name the original's ISA13 %s, date and time", t, oisa[13])
		}
		if element(t, 2) != oisa[9] || element(t, 3) != oisa[10] {
			return fmt.Errorf("TA102-03 %s %s, want the original's ISA09-10 %s %s", element(t, 2), element(t, 3), oisa[9], oisa[10])
		}
		want := "A"
		if rejected {
			want = "R"
		}
		if element(t, 4) != want || !digits(element(t, 5), 3) || (rejected && element(t, 5) != code) || (!rejected && element(t, 5) != "000") {
			return fmt.Errorf("TA104-05 %s %s, want %s and a code of three digits (%q when rejecting)", element(t, 4), element(t, 5), want, code)
		}
	}
	if rejected {
		if n := len(a.find("GS")); n != 0 {
			return fmt.Errorf("a rejected interchange is acknowledged by its TA1 alone, not %d groups", n)
		}
		return nil
	}
	return functionalAcks(a, o)
}

// envelopeX12 checks an interchange's trailers: IEA01 counts its groups and
// IEA02 repeats ISA13, GE01 counts a group's sets and GE02 repeats GS06,
// SE01 counts a set's segments, ST and SE included, and SE02 repeats ST02.
func envelopeX12(x x12) error {
	var groups, sets, segments int
	var gs, st []string
	for _, s := range x.segments {
		if st != nil {
			segments++
		}
		switch s[0] {
		case "GS":
			gs, sets = s, 0
			groups++
		case "GE":
			if gs == nil || element(s, 1) != strconv.Itoa(sets) || element(s, 2) != element(gs, 6) {
				return fmt.Errorf("GE %v does not close GS %v of %d sets", s, gs, sets)
			}
			gs = nil
		case "ST":
			st, segments = s, 1
			sets++
		case "SE":
			if st == nil || element(s, 1) != strconv.Itoa(segments) || element(s, 2) != element(st, 2) {
				return fmt.Errorf("SE %v does not close ST %v of %d segments", s, st, segments)
			}
			st = nil
		case "IEA":
			isa := x.segments[0]
			if element(s, 1) != strconv.Itoa(groups) || element(s, 2) != isa[13] {
				return fmt.Errorf("IEA %v, want %d groups and ISA13 %s", s, groups, isa[13])
			}
		}
	}
	if last := x.segments[len(x.segments)-1]; last[0] != "IEA" {
		return fmt.Errorf("the interchange ends with %s, not IEA", last[0])
	}
	return nil
}

// functionalAcks checks that ack holds one 997 per functional group of
// original, each accepting every transaction set of its group.
func functionalAcks(a, o x12) error {
	type group struct {
		code, control string
		sets          [][2]string // ST01, ST02
	}
	var groups []*group
	for _, s := range o.segments {
		switch s[0] {
		case "GS":
			groups = append(groups, &group{code: element(s, 1), control: element(s, 6)})
		case "ST":
			g := groups[len(groups)-1]
			g.sets = append(g.sets, [2]string{element(s, 1), element(s, 2)})
		}
	}
	var acks [][][]string // the segments of each 997, ST to SE
	for _, s := range a.segments {
		switch {
		case s[0] == "GS" && element(s, 1) != "FA":
			return fmt.Errorf("GS01 %s, want FA: a 997 is a functional acknowledgment", element(s, 1))
		case s[0] == "ST" && element(s, 1) != "997":
			return fmt.Errorf("ST01 %s, want 997", element(s, 1))
		case s[0] == "ST":
			acks = append(acks, [][]string{s})
		case len(acks) > 0 && acks[len(acks)-1][len(acks[len(acks)-1])-1][0] != "SE":
			acks[len(acks)-1] = append(acks[len(acks)-1], s)
		}
	}
	if len(acks) != len(groups) {
		return fmt.Errorf("%d 997 transaction sets for %d functional groups", len(acks), len(groups))
	}
	for i, g := range groups {
		body := acks[i]
		if ak1 := body[1]; ak1[0] != "AK1" || element(ak1, 1) != g.code || element(ak1, 2) != g.control {
			return fmt.Errorf("997 %d begins %v, want AK1*%s*%s", i+1, ak1, g.code, g.control)
		}
		var ak2 [][]string
		for j, s := range body {
			if s[0] == "AK2" {
				ak2 = append(ak2, s)
				next := body[j+1]
				for next[0] == "AK3" || next[0] == "AK4" {
					j++
					next = body[j+1]
				}
				if next[0] != "AK5" || !slices.Contains([]string{"A", "E", "M", "R", "W", "X"}, element(next, 1)) {
					return fmt.Errorf("AK2 %v is not followed by its AK5", s)
				}
			}
		}
		if len(ak2) != len(g.sets) {
			return fmt.Errorf("997 %d has %d AK2 for %d transaction sets", i+1, len(ak2), len(g.sets))
		}
		for j, set := range g.sets {
			if element(ak2[j], 1) != set[0] || element(ak2[j], 2) != set[1] {
				return fmt.Errorf("AK2 %v, want %s %s", ak2[j], set[0], set[1])
			}
		}
		ak9 := body[len(body)-2]
		n := strconv.Itoa(len(g.sets))
		if ak9[0] != "AK9" || element(ak9, 1) != "A" || element(ak9, 2) != n || element(ak9, 3) != n || element(ak9, 4) != n {
			return fmt.Errorf("997 %d ends %v, want AK9*A*%s*%s*%s before its SE", i+1, ak9, n, n, n)
		}
	}
	return nil
}
