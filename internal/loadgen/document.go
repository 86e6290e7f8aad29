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

// template is a text in which a document number appears in several places
// (the docnum, the control record's DOCNUM and the order number
// E1EDK01.BELNR that the bench message type fingerprints). Writing a
// message of another number changes only those bytes, so that generating a
// new message costs a copy of the template and nothing else.
type template struct {
	text  []byte
	slots []int // offsets of the number in text
}

func newTemplate(text []byte) template {
	t := template{text: text}
	for i := 0; ; {
		j := bytes.Index(text[i:], []byte(slotMark))
		if j < 0 {
			break
		}
		t.slots = append(t.slots, i+j)
		i += j + numberWidth
	}
	return t
}

// appendNumbered appends the text with document number n in every slot.
func (t template) appendNumbered(dst []byte, n uint64) []byte {
	start := len(dst)
	dst = append(dst, t.text...)
	var digits [numberWidth]byte
	s := strconv.AppendUint(digits[:0], n%1e16, 10)
	pad := numberWidth - len(s)
	for _, off := range t.slots {
		for i := range pad {
			dst[start+off+i] = '0'
		}
		copy(dst[start+off+pad:], s)
	}
	return dst
}

// Document is an ORDERS05 envelope for receive-message, padded with E1EDP01
// order items as a large IDoc is.
type Document struct {
	template
	payload [2]int
}

// NewDocument builds an envelope whose payload is at least payloadSize bytes.
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
	d.template = newTemplate(env.Bytes())
	return d
}

// Envelope returns the receive-message body of document number n.
func (d *Document) Envelope(n uint64) []byte {
	return d.appendNumbered(nil, n)
}

// Payload returns the payload member of document number n: the bytes a
// message row stores.
func (d *Document) Payload(n uint64) []byte {
	return d.Envelope(n)[d.payload[0]:d.payload[1]]
}

// newIDoc builds the IDOC element of the same order in IDoc-XML, as SAP's
// XML HTTP port sends it, at least size bytes long. Its JSON view has the
// shape of Document's payload, so the bench message type's path reads it
// alike.
func newIDoc(size int) template {
	var x bytes.Buffer
	x.Grow(size + 1024)
	x.WriteString(`<IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><TABNAM>EDI_DC40</TABNAM><MANDT>200</MANDT>` +
		`<DOCNUM>` + slotMark + `</DOCNUM><IDOCTYP>ORDERS05</IDOCTYP><MESTYP>ORDERS</MESTYP>` +
		`<SNDPOR>SAPQ01</SNDPOR><SNDPRT>LS</SNDPRT><SNDPRN>Q01CLNT200</SNDPRN><RCVPOR>EDIHUB</RCVPOR>` +
		`<RCVPRT>LS</RCVPRT><RCVPRN>EDIHUB01</RCVPRN><CREDAT>20260310</CREDAT><CRETIM>101501</CRETIM></EDI_DC40>` +
		`<E1EDK01 SEGMENT="1"><CURCY>BRL</CURCY><BSART>NB</BSART><BELNR>` + slotMark + `</BELNR></E1EDK01>`)
	const tail = `<E1EDS01 SEGMENT="1"><SUMID>002</SUMID><SUMME>1432.80</SUMME><SUNIT>BRL</SUNIT></E1EDS01></IDOC>`
	for i := 1; i == 1 || x.Len()+len(tail) < size; i++ {
		fmt.Fprintf(&x, `<E1EDP01 SEGMENT="1"><POSEX>%06d</POSEX><ACTION>001</ACTION><MENGE>%d.000</MENGE>`+
			`<MENEE>PCE</MENEE><VPREI>19.90</VPREI><NETWR>%d.90</NETWR><WERKS>2100</WERKS>`+
			`<E1EDP19 SEGMENT="1"><QUALF>001</QUALF><IDTNR>MAT-%07d</IDTNR></E1EDP19></E1EDP01>`,
			i*10, i%100+1, (i%100+1)*19, i)
	}
	x.WriteString(tail)
	return newTemplate(x.Bytes())
}
