package typeeditor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/edi"
	"github.com/lefia/edihub/internal/envelope"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/idocxml"
)

// recentSamples is how many recent messages the editor offers as samples.
const recentSamples = 20

// Sample is a recent message offered as the preview's payload.
type Sample struct {
	ID          int64
	Environment string
	Docnum      string
	ReceivedAt  time.Time
}

// Preview is one payload's fingerprint under the proposed settings,
// computed by fingerprint.Compute with the type's id, exactly as ingest
// computes it when the payload arrives.
type Preview struct {
	// MessageID is the stored message previewed, 0 for a pasted payload.
	MessageID int64
	Docnum    string // the docnum the fallback uses, "" for none
	// Problem says why there is nothing to show: no sample, a pasted
	// payload that is not JSON, or values ingest would refuse.
	Problem string
	Result  fingerprint.Result
	// Unsaved reports a type not created yet. Its id is part of every
	// fingerprint, so Result holds the values and the fallback only.
	Unsaved bool
	// Stored is the fingerprint the stored message got when it arrived, ""
	// for a pasted payload or a message that got none.
	Stored string
	// Interchange is the pasted X12 or EDIFACT interchange's control
	// number, "" for any other sample; Sets are then its transaction sets
	// or messages, each previewed as ingest would store it, and the fields
	// above are unused.
	Interchange string
	Sets        []SetPreview
}

// SetPreview is one transaction set or EDIFACT message of a pasted
// interchange under the proposed settings.
type SetPreview struct {
	Position int
	Code     string // its message type: ST01, UNH 0065
	Docnum   string // ST02, UNH 0062
	// Problem says why ingest would refuse it; Result is empty then.
	Problem string
	Result  fingerprint.Result
}

// recent lists the type's most recent messages, to choose a sample from.
func (s *Service) recent(ctx context.Context, scope auth.Scope, t Type) ([]Sample, error) {
	rows, err := s.q.MessageListOfType(ctx, db.MessageListOfTypeParams{
		TenantID: t.TenantID, MessageTypeID: t.ID, ScopeTenantID: scope.TenantFilter(), MaxMessages: recentSamples,
	})
	if err != nil {
		return nil, fmt.Errorf("list messages of type %d: %w", t.ID, err)
	}
	samples := make([]Sample, len(rows))
	for i, r := range rows {
		samples[i] = Sample{ID: r.ID, Environment: r.EnvironmentSlug, Docnum: db.OrEmpty(r.Docnum), ReceivedAt: r.ReceivedAt.UTC()}
	}
	return samples, nil
}

// preview computes the fingerprint of f's sample under p: the pasted
// payload if there is one, else the chosen stored message, by default the
// most recent. t is nil for a type not created yet, which has no stored
// messages either.
func (s *Service) preview(ctx context.Context, scope auth.Scope, t *Type, recent []Sample, f Form, p Proposal) (Preview, error) {
	var pv Preview
	var payload []byte
	switch {
	case edi.LooksLikeInterchange([]byte(strings.TrimSpace(f.SamplePayload))):
		return previewInterchange(t, f, p), nil
	case strings.HasPrefix(strings.TrimSpace(f.SamplePayload), "<"):
		// IDoc-XML is previewed through its first IDoc's JSON view, which
		// is what ingest fingerprints.
		doc, err := idocxml.Parse([]byte(f.SamplePayload), "", idocxml.DefaultLimits)
		if err != nil {
			pv.Problem = "The pasted IDoc-XML cannot be read: " + err.Error()
			return pv, nil
		}
		payload, pv.Docnum = doc.IDocs[0].View, doc.IDocs[0].Docnum
		if f.SampleDocnum != "" {
			pv.Docnum = f.SampleDocnum
		}
	case strings.TrimSpace(f.SamplePayload) != "":
		// The same reading of a payload as a webhook's: the docnum of an
		// IDoc control record inside it, unless one is given.
		env, err := envelope.ParseRaw([]byte(f.SamplePayload))
		if ae, ok := apperr.As(err); ok && ae.Err == nil {
			pv.Problem = "The pasted payload cannot be read: " + ae.Detail
			return pv, nil
		}
		if err != nil {
			return pv, err
		}
		payload, pv.Docnum = env.Payload, env.Docnum
		if f.SampleDocnum != "" {
			pv.Docnum = f.SampleDocnum
		}
	case t == nil || len(recent) == 0:
		pv.Problem = "Paste a payload to see what the paths read from it."
		return pv, nil
	default:
		id := recent[0].ID
		if f.SampleMessage != "" {
			var err error
			if id, err = strconv.ParseInt(f.SampleMessage, 10, 64); err != nil {
				pv.Problem = fmt.Sprintf("%q is not a message id", f.SampleMessage)
				return pv, nil
			}
		}
		rows, err := s.q.MessagePayloadsOfType(ctx, db.MessagePayloadsOfTypeParams{
			TenantID: t.TenantID, MessageTypeID: t.ID, Ids: []int64{id}, ScopeTenantID: scope.TenantFilter(),
		})
		if err != nil {
			return pv, fmt.Errorf("load sample message %d: %w", id, err)
		}
		if len(rows) == 0 {
			pv.Problem = fmt.Sprintf("There is no message %d of type %s.", id, t.Code)
			return pv, nil
		}
		pv.MessageID, pv.Docnum, pv.Stored = id, db.OrEmpty(rows[0].Docnum), db.OrEmpty(rows[0].ComputedFingerprint)
		if payload, err = viewOf(rows[0]); err != nil {
			return pv, err
		}
	}

	in := fingerprint.Input{Paths: p.Paths, Docnum: pv.Docnum, Payload: payload}
	if t != nil {
		in.MessageTypeID = t.ID
	}
	res, err := fingerprint.Compute(in)
	if err != nil {
		pv.Problem = "Ingest would refuse this payload (invalid-payload): " + err.Error()
		return pv, nil
	}
	pv.Result = res
	if t == nil {
		pv.Unsaved, pv.Result.Fingerprint = true, ""
	}
	return pv, nil
}

// previewInterchange previews each transaction set or message of the
// interchange pasted into f on its JSON view, with its own control number
// as the docnum, as ingest would decide it. The sample docnum does not
// apply: each set has its own.
func previewInterchange(t *Type, f Form, p Proposal) Preview {
	var pv Preview
	ic, err := edi.Parse([]byte(strings.TrimSpace(f.SamplePayload)), edi.DefaultLimits)
	if err != nil {
		pv.Problem = "The pasted interchange cannot be read: " + err.Error()
		return pv
	}
	pv.Interchange, pv.Unsaved = ic.ControlNumber, t == nil
	pv.Sets = make([]SetPreview, len(ic.Messages))
	for i, m := range ic.Messages {
		in := fingerprint.Input{Paths: p.Paths, Docnum: m.Docnum, Payload: m.View}
		if t != nil {
			in.MessageTypeID = t.ID
		}
		set := SetPreview{Position: m.Position, Code: m.Code, Docnum: m.Docnum}
		res, err := fingerprint.Compute(in)
		if err != nil {
			set.Problem = "Ingest would refuse it (invalid-payload): " + err.Error()
		} else {
			set.Result = res
		}
		if t == nil {
			set.Result.Fingerprint = ""
		}
		pv.Sets[i] = set
	}
	return pv
}
