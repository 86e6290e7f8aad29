package typeeditor

import "github.com/lefia/edihub/internal/messagetype"

// Preset fills the paths of a common kind of document. README.md
// ("Message-type presets") explains each choice.
type Preset struct {
	Key   string // the form's value, as in "preset:orders05"
	Name  string
	Paths []string
	Why   string // one sentence for the editor
}

// Presets are the editor's presets, in the order it offers them.
var Presets = []Preset{
	{
		Key: "orders05", Name: "IDoc ORDERS05",
		Paths: messagetype.IDocORDERS05Paths,
		Why: "The purchase order number stays the same when SAP repeats the output under a new DOCNUM; " +
			"the message type, read only from an order that has a number, keeps an order change (ORDCHG) " +
			"from matching its order (ORDERS), and an order without a number falls back to its DOCNUM.",
	},
	{
		Key: "invoic02", Name: "IDoc INVOIC02",
		Paths: messagetype.IDocINVOIC02Paths,
		Why: "The invoice number, read from the reference segment whose qualifier 009 says it is the invoice " +
			"number, whether the converter made E1EDK02 an object or an array; an invoice without one falls " +
			"back to its DOCNUM.",
	},
	{
		Key: "cloudevents", Name: "S/4HANA CloudEvents",
		Paths: []string{"source", "id"},
		Why:   "A CloudEvent is identified by source and id together; a redelivered event keeps both.",
	},
}

// PresetByKey finds a preset by its key.
func PresetByKey(key string) (Preset, bool) {
	for _, p := range Presets {
		if p.Key == key {
			return p, true
		}
	}
	return Preset{}, false
}
