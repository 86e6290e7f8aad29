package loadgen

import (
	"bytes"
	"fmt"
	"strconv"
)

// numberWidth is the width of the document number written into every slot:
// the 16 digits of an IDoc DOCNUM.
const numberWidth = 16

// slotMark stands for the document number in the template until the slots
// are recorded; it cannot occur elsewhere in the generated text.
const slotMark = "################"

// Document is an ORDERS05 envelope for receive-message whose document number
// appears in several places (the envelope's docnum, the control record's
// DOCNUM and the order number E1EDK01.BELNR that the bench message type
// fingerprints). With writes only those bytes change, so that generating a
// new message costs a copy of the template and nothing else.
type Document struct {
	template []byte
	slots    []int // offsets of the number in template
	payload  [2]int
}

// NewDocument builds an envelope whose payload is at least payloadSize bytes,
// padded with E1EDP01 order items as a large IDoc is.
func NewDocument(payloadSize int) *Document {
	var p bytes.Buffer
	p.Grow(payloadSize + 1024)
	p.WriteString(`{"ORDERS05":{"IDOC":{"@BEGIN":"1",` +
		`"EDI_DC40":{"@SEGMENT":"1","TABNAM":"EDI_DC40","MANDT":"200","DOCNUM":"` + slotMark + `",` +
		`"IDOCTYP":"ORDERS05","MESTYP":"ORDERS","SNDPOR":"SAPQ01","SNDPRT":"LS","SNDPRN":"Q01CLNT200",` +
		`"RCVPOR":"EDIHUB","RCVPRT":"LS","RCVPRN":"EDIHUB01","CREDAT":"20260310","CRETIM":"101501"},` +
		`"E1EDK01":{"@SEGMENT":"1","CURCY":"BRL","BSART":"NB","BELNR":"` + slotMark + `"},` +
		`"E1EDP01":[`)
	const tail = `],"E1EDS01":{"@SEGMENT":"1","SUMID":"002","SUMME":"1432.80","SUNIT":"BRL"}}}}`
	for i := 1; i == 1 || p.Len()+len(tail) < payloadSize; i++ {
		if i > 1 {
			p.WriteByte(',')
		}
		fmt.Fprintf(&p, `{"@SEGMENT":"1","POSEX":"%06d","ACTION":"001","MENGE":"%d.000","MENEE":"PCE",`+
			`"VPREI":"19.90","NETWR":"%d.90","WERKS":"2100","E1EDP19":{"@SEGMENT":"1","QUALF":"001","IDTNR":"MAT-%07d"}}`,
			i*10, i%100+1, (i%100+1)*19, i)
	}
	p.WriteString(tail)

	var env bytes.Buffer
	env.Grow(p.Len() + 128)
	env.WriteString(`{"message_type":"ORDERS05","docnum":"` + slotMark + `","payload":`)
	start := env.Len()
	env.Write(p.Bytes())
	d := &Document{payload: [2]int{start, env.Len()}}
	env.WriteString("}")
	d.template = env.Bytes()
	for i := 0; ; {
		j := bytes.Index(d.template[i:], []byte(slotMark))
		if j < 0 {
			break
		}
		d.slots = append(d.slots, i+j)
		i += j + numberWidth
	}
	return d
}

// Envelope returns the receive-message body of document number n.
func (d *Document) Envelope(n uint64) []byte {
	out := bytes.Clone(d.template)
	var digits [numberWidth]byte
	s := strconv.AppendUint(digits[:0], n%1e16, 10)
	pad := numberWidth - len(s)
	for _, off := range d.slots {
		for i := range pad {
			out[off+i] = '0'
		}
		copy(out[off+pad:], s)
	}
	return out
}

// Payload returns the payload member of document number n: the bytes a
// message row stores.
func (d *Document) Payload(n uint64) []byte {
	return d.Envelope(n)[d.payload[0]:d.payload[1]]
}
