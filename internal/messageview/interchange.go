package messageview

import (
	"github.com/tidwall/gjson"
)

// Interchange is the X12 or EDIFACT envelope a message came in, as its
// JSON view keeps it beside the segments ("interchange").
type Interchange struct {
	Standard, Sender, Receiver string
	// ControlNumber is the interchange's (ISA13, UNB 0020),
	// GroupControlNumber its functional group's (GS06, UNG 0048; "" for an
	// EDIFACT interchange without groups), and MessageControlNumber the
	// transaction set's or message's own (ST02, UNH 0062), its docnum.
	ControlNumber, GroupControlNumber, MessageControlNumber string
	Version                                                 string
}

// interchangeOf reads the envelope of a message read from an interchange;
// nil for any other. Only a message that arrived as other bytes than its
// JSON payload (received) can have one: a JSON payload's own
// "interchange" member is the sender's, not edihub's.
func interchangeOf(payload []byte, received *Received, docnum string) *Interchange {
	if received == nil {
		return nil
	}
	env := gjson.GetBytes(payload, "interchange")
	standard := env.Get("standard").String()
	if standard != "x12" && standard != "edifact" {
		return nil
	}
	return &Interchange{
		Standard: standard, Sender: env.Get("sender").String(), Receiver: env.Get("receiver").String(),
		ControlNumber: env.Get("control_number").String(), GroupControlNumber: env.Get("group_control_number").String(),
		MessageControlNumber: docnum, Version: env.Get("version").String(),
	}
}
