package loadgen

import (
	"fmt"
	"strconv"
	"strings"
)

// interchange writes X12 interchanges of 850 purchase orders, or EDIFACT
// interchanges of D.96A ORDERS messages, as a trading partner's gateway
// posts them: each transaction set or message a new order whose number
// (BEG03, BGM02) is a document number, the type's key path in the bench
// tenant; ST02 and UNH 0062 number the sets within their interchange, as
// senders number them.
type interchange struct {
	form Form
	// set is a transaction set's or message's segments after its header
	// (ST, UNH) and before its trailer (SE, UNT), the order number in its
	// slot; segments is how many there are with header and trailer.
	set      template
	segments int
}

// The parties of every interchange: each client of a run is a sender of its
// own (see sender), and edihub's side is one receiver.
const (
	interchangeReceiver = "EDIHUBSELLER"
	interchangeDate     = "261204"
	interchangeTime     = "0941"
)

// newInterchange builds the set of form (FormX12 or FormEDIFACT) of at
// least setSize bytes with its header and trailer, padded with order lines.
func newInterchange(form Form, setSize int) interchange {
	var b strings.Builder
	ic := interchange{form: form}
	line := func(i int) string {
		if form == FormX12 {
			return fmt.Sprintf("PO1*%d*%d*EA*19.9**BP*MAT-%07d~\n", i, i%100+1, i)
		}
		return fmt.Sprintf("LIN+%d++MAT-%07d:SRS'\nQTY+21:%d'\n", i, i, i%100+1)
	}
	head, tail := "BEG*00*SA*PO-"+slotMark+"**20261204~\nREF*DP*038~\n", "CTT*%d~\n"
	perLine, fixed := 1, 5 // PO1; ST, BEG, REF, CTT and SE
	if form == FormEDIFACT {
		head = "BGM+220+PO-" + slotMark + "+9'\nDTM+137:20261204:102'\nNAD+BY+5412345000013::9'\nNAD+SU+4012345000009::9'\n"
		tail, perLine, fixed = "UNS+S'\nCNT+2:%d'\n", 2, 8 // LIN and QTY; UNH, BGM, DTM, NAD×2, UNS, CNT and UNT
	}
	b.WriteString(head)
	lines := 0
	for lines == 0 || b.Len()+len(tail)+32 < setSize {
		lines++
		b.WriteString(line(lines))
	}
	fmt.Fprintf(&b, tail, lines)
	ic.set = newTemplate([]byte(b.String()))
	ic.segments = fixed + lines*perLine
	return ic
}

// sender names client's partner in run: a sender of its own per client and
// run, so that each sender's control numbers run in sequence from 1 and
// never meet another run's (at most 15 characters, ISA06's width).
func sender(run uint64, client int) string {
	return fmt.Sprintf("L%010d%04d", run%1e10, client%1e4)
}

// appendInterchange appends the interchange numbered n: perRequest sets,
// their order numbers n.first, n.first+1, …, from n's sender under its
// control number.
func (ic interchange) appendInterchange(dst []byte, n numbers, perRequest int, run uint64) []byte {
	from := sender(run, n.client)
	control := n.control % 1e9
	if ic.form == FormX12 {
		dst = fmt.Appendf(dst, "ISA*00*          *00*          *ZZ*%-15s*ZZ*%-15s*%s*%s*U*00401*%09d*0*P*>~\n",
			from, interchangeReceiver, interchangeDate, interchangeTime, control)
		dst = fmt.Appendf(dst, "GS*PO*%s*%s*20%s*%s*%d*X*004010~\n", from, interchangeReceiver, interchangeDate, interchangeTime, control)
		for i := range perRequest {
			set := fmt.Sprintf("%04d", i+1)
			dst = append(append(append(dst, "ST*850*"...), set...), "~\n"...)
			dst = ic.set.appendNumbered(dst, n.first+uint64(i))
			dst = fmt.Appendf(dst, "SE*%d*%s~\n", ic.segments, set)
		}
		return fmt.Appendf(dst, "GE*%d*%d~\nIEA*1*%09d~\n", perRequest, control, control)
	}
	dst = fmt.Appendf(dst, "UNA:+.? '\nUNB+UNOC:3+%s:ZZ+%s:ZZ+%s:%s+%d'\n", from, interchangeReceiver, interchangeDate, interchangeTime, control)
	for i := range perRequest {
		ref := strconv.Itoa(i + 1)
		dst = append(append(append(dst, "UNH+"...), ref...), "+ORDERS:D:96A:UN'\n"...)
		dst = ic.set.appendNumbered(dst, n.first+uint64(i))
		dst = fmt.Appendf(dst, "UNT+%d+%s'\n", ic.segments, ref)
	}
	return fmt.Appendf(dst, "UNZ+%d+%d'\n", perRequest, control)
}
