package fingerprint_test

import (
	"bytes"
	"fmt"
)

// orders05Payload returns an ORDERS05-like IDoc in the shape of the samples
// (one-space indentation, header segments first, then E1EDP01 items, then the
// E1EDS01 summary), with as many items as make it at least size bytes. The
// summary comes last, as in a real IDoc, so a path that reads it makes gjson
// scan the whole document.
func orders05Payload(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 1024)
	b.WriteString(`{
 "ORDERS05": {
  "IDOC": {
   "@BEGIN": "1",
   "EDI_DC40": {
    "@SEGMENT": "1",
    "TABNAM": "EDI_DC40",
    "DOCNUM": "0000000000900101",
    "IDOCTYP": "ORDERS05",
    "MESTYP": "ORDERS",
    "CREDAT": "20260310",
    "CRETIM": "101501"
   },
   "E1EDK01": {
    "@SEGMENT": "1",
    "CURCY": "BRL",
    "BSART": "NB",
    "BELNR": "4500012345"
   },
   "E1EDK02": {
    "@SEGMENT": "1",
    "QUALF": "001",
    "BELNR": "4500012345",
    "DATUM": "20260310"
   },
   "E1EDP01": [`)
	const tail = `
   ],
   "E1EDS01": {
    "@SEGMENT": "1",
    "SUMID": "002",
    "SUMME": "1432.80",
    "SUNIT": "BRL"
   }
  }
 }
}
`
	for i := 1; i == 1 || b.Len()+len(tail) < size; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `
    {
     "@SEGMENT": "1",
     "POSEX": "%06d",
     "ACTION": "001",
     "MENGE": "%d.000",
     "MENEE": "PCE",
     "VPREI": "19.90",
     "NETWR": "%d.%02d",
     "WERKS": "2100",
     "E1EDP19": {
      "@SEGMENT": "1",
      "QUALF": "001",
      "IDTNR": "MAT-%07d"
     }
    }`, i*10, i%100+1, (i%100+1)*19, (i*90)%100, i)
	}
	b.WriteString(tail)
	return b.Bytes()
}
