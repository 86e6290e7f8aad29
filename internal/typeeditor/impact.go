package typeeditor

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/storedview"
)

// batchBytes bounds the payload bytes the analysis loads at once, so that
// replaying thousands of large documents never holds them all in memory. A
// single payload larger than this is still loaded, alone.
const batchBytes = 8 << 20

// Impact is what the proposed settings would have done to the type's most
// recent stored messages, compared with the current settings. Blocked
// duplicates are not stored, so the analysis sees only messages the
// settings of their day let through: it shows which of them a proposal
// would have blocked, not which blocked ones it would have let through.
type Impact struct {
	Messages int       // messages replayed
	From, To time.Time // when the oldest and the newest of them arrived
	// Keyed counts messages that came with an Idempotency-Key or a webhook
	// delivery id; such messages neither block nor are blocked by
	// fingerprint, under any settings.
	Keyed             int
	Current, Proposed Outcome
	// NewlyBlocked counts messages the proposal would have blocked that the
	// current settings let through; NoLongerBlocked the other way round.
	NewlyBlocked    int
	NoLongerBlocked int
	Paths           []PathShare // the proposal's paths, in order
	// FromDocnum lists, newest last, up to MaxFallbacksListed of the
	// messages whose proposed fingerprint fell back to the docnum or to
	// none, with what each path read, so that an admin sees why.
	FromDocnum []Fallback
	// Unchanged is set when the proposal is the saved settings, so that
	// the page says so instead of comparing the settings with themselves.
	Unchanged bool
}

// Unmatched lists the proposed paths that had no value in any replayed
// message whose values could be read: a misspelt path, most likely, which
// would leave every message to the docnum fallback.
func (im Impact) Unmatched() []PathShare { return im.pathsWhere(PathShare.Unmatched) }

// pathsWhere lists the proposed paths for which keep is true.
func (im Impact) pathsWhere(keep func(PathShare) bool) []PathShare {
	var list []PathShare
	for _, p := range im.Paths {
		if keep(p) {
			list = append(list, p)
		}
	}
	return list
}

// Constant lists the proposed paths that read one and the same value in
// every replayed message where they read one: such a path tells none of
// them apart, and beside a path that is sometimes missing it would make
// every document lacking that value one document (SPEC.md, Mode 2).
func (im Impact) Constant() []PathShare { return im.pathsWhere(PathShare.Constant) }

// MaxFallbacksListed bounds Impact.FromDocnum: enough to see the pattern,
// while the page stays small whatever the sample size.
const MaxFallbacksListed = 20

// Fallback is a replayed message whose proposed fingerprint was made of
// its docnum, or that got none, and what each path read in it.
type Fallback struct {
	MessageID int64
	Docnum    string // "" when it has none
	Kind      fingerprint.Fallback
	Values    []fingerprint.Value
}

// Outcome is what one set of settings did to the replayed messages.
type Outcome struct {
	WindowHours int32
	// Duplicates were blocked: a message of the same environment with the
	// same fingerprint had been let through less than the window before.
	Duplicates int
	// FromDocnum were fingerprinted from the docnum: no path is configured,
	// or none had a value.
	FromDocnum int
	// NoFingerprint got none (a fallback without a docnum) and so were never
	// deduplicated.
	NoFingerprint int
	// Refused hold a value that cannot be canonicalised: ingest answers 400
	// invalid-payload.
	Refused int
}

// PathShare is how often a path had a value, and whether it was always
// the same one.
type PathShare struct {
	Path    string
	Matched int // messages where the path read a value that is not missing
	Of      int // messages whose values could be read
	// Value is the value, as JSON text, the path read in the first message
	// where it read one; Varies is set once another message read another.
	Value  string
	Varies bool
}

// count adds one message's value.
func (p *PathShare) count(v fingerprint.Value) {
	p.Of++
	if v.Missing {
		return
	}
	if p.Matched == 0 {
		p.Value = v.JSON
	} else if v.JSON != p.Value {
		p.Varies = true
	}
	p.Matched++
}

// Constant reports whether the path read the same value in every one of at
// least two replayed messages where it read one.
func (p PathShare) Constant() bool { return p.Matched >= 2 && !p.Varies }

// Unmatched reports whether the path had no value in any replayed message
// whose values could be read: a misspelt path, most likely.
func (p PathShare) Unmatched() bool { return p.Of > 0 && p.Matched == 0 }

// sampled is one replayed message.
type sampled struct {
	id          int64
	environment int64
	docnum      string
	receivedAt  time.Time
	keyed       bool
	payload     []byte
}

// impact replays the type's last p.SampleSize messages under its current
// settings and under p.
func (s *Service) impact(ctx context.Context, scope auth.Scope, t Type, p Proposal) (Impact, error) {
	rows, err := s.q.MessageListOfType(ctx, db.MessageListOfTypeParams{
		TenantID: t.TenantID, MessageTypeID: t.ID, ScopeTenantID: scope.TenantFilter(), MaxMessages: int32(p.SampleSize),
	})
	if err != nil {
		return Impact{}, fmt.Errorf("list messages of type %d: %w", t.ID, err)
	}
	// Oldest first: the order ingest decided them in.
	slices.Reverse(rows)
	a := newAnalysis(t.ID, t.Paths, t.Window(), p.Paths, p.Window())
	for batch := range batches(rows, batchBytes) {
		ids := make([]int64, len(batch))
		for i, r := range batch {
			ids[i] = r.ID
		}
		loaded, err := s.q.MessagePayloadsOfType(ctx, db.MessagePayloadsOfTypeParams{
			TenantID: t.TenantID, MessageTypeID: t.ID, Ids: ids, ScopeTenantID: scope.TenantFilter(),
		})
		if err != nil {
			return Impact{}, fmt.Errorf("load payloads of type %d: %w", t.ID, err)
		}
		payloads := make(map[int64][]byte, len(loaded))
		for _, l := range loaded {
			if payloads[l.ID], err = viewOf(l); err != nil {
				return Impact{}, err
			}
		}
		for _, r := range batch {
			// Messages are never deleted, so every listed one is loaded.
			a.add(sampled{
				id: r.ID, environment: r.EnvironmentID, docnum: db.OrEmpty(r.Docnum), receivedAt: r.ReceivedAt,
				keyed: r.Keyed, payload: payloads[r.ID],
			})
		}
	}
	return a.result(), nil
}

// viewOf is the view of a loaded message, what its key paths read.
func viewOf(m db.MessagePayloadsOfTypeRow) ([]byte, error) {
	view, err := storedview.Stored{Payload: m.Payload, ContentType: m.ContentType, Received: m.ViewBytes, Frame: m.EdiFrame}.View()
	if err != nil {
		return nil, fmt.Errorf("rebuild the view of message %d: %w", m.ID, err)
	}
	return view, nil
}

// batches cuts rows into runs of at most limit payload bytes, each holding
// at least one row.
func batches(rows []db.MessageListOfTypeRow, limit int64) iter.Seq[[]db.MessageListOfTypeRow] {
	return func(yield func([]db.MessageListOfTypeRow) bool) {
		start, size := 0, int64(0)
		for i, r := range rows {
			if i > start && size+r.PayloadBytes > limit {
				if !yield(rows[start:i]) {
					return
				}
				start, size = i, 0
			}
			size += r.PayloadBytes
		}
		if start < len(rows) {
			yield(rows[start:])
		}
	}
}

// analysis replays messages, oldest first, under two sets of settings.
type analysis struct {
	current, proposed replay
	impact            Impact
}

func newAnalysis(typeID int64, currentPaths []string, currentWindow int32, proposedPaths []string, proposedWindow int32) *analysis {
	a := &analysis{
		current:  newReplay(typeID, currentPaths, currentWindow),
		proposed: newReplay(typeID, proposedPaths, proposedWindow),
	}
	a.impact.Paths = make([]PathShare, len(proposedPaths))
	for i, path := range proposedPaths {
		a.impact.Paths[i].Path = path
	}
	return a
}

// add replays one message under both settings.
func (a *analysis) add(m sampled) {
	im := &a.impact
	if im.Messages == 0 {
		im.From = m.receivedAt
	}
	im.Messages++
	im.To = m.receivedAt
	if m.keyed {
		im.Keyed++
	}
	blockedNow, _ := a.current.decide(m)
	blocked, res := a.proposed.decide(m)
	switch {
	case blocked && !blockedNow:
		im.NewlyBlocked++
	case blockedNow && !blocked:
		im.NoLongerBlocked++
	}
	if res == nil {
		return
	}
	for i, v := range res.Values {
		im.Paths[i].count(v)
	}
	// A type without paths falls back for every message, which the page
	// already says; the list is for paths that read nothing.
	if res.Fallback != fingerprint.FallbackNone && res.Fallback != fingerprint.FallbackNoPaths {
		if len(im.FromDocnum) == MaxFallbacksListed {
			im.FromDocnum = im.FromDocnum[1:]
		}
		im.FromDocnum = append(im.FromDocnum, Fallback{MessageID: m.id, Docnum: m.docnum, Kind: res.Fallback, Values: res.Values})
	}
}

// result is the impact of the messages added so far.
func (a *analysis) result() Impact {
	im := a.impact
	im.Current, im.Proposed = a.current.outcome, a.proposed.outcome
	return im
}

// replay decides messages under one set of settings as ingest does: a
// message is blocked when a message of the same environment with the same
// fingerprint was let through less than the window before it; otherwise
// it is stored and becomes the one later messages are matched against.
type replay struct {
	typeID  int64
	paths   []string
	window  time.Duration
	outcome Outcome
	// holders is when the message holding each fingerprint arrived.
	holders map[claim]time.Time
}

type claim struct {
	environment int64
	fingerprint string
}

func newReplay(typeID int64, paths []string, windowHours int32) replay {
	return replay{
		typeID: typeID, paths: paths, window: time.Duration(windowHours) * time.Hour,
		outcome: Outcome{WindowHours: windowHours}, holders: map[claim]time.Time{},
	}
}

// decide replays m and reports whether it would have been blocked, with
// its fingerprint's result (nil when ingest would have refused it).
func (r *replay) decide(m sampled) (blocked bool, res *fingerprint.Result) {
	fp, err := fingerprint.Compute(fingerprint.Input{
		MessageTypeID: r.typeID, Paths: r.paths, Docnum: m.docnum, Payload: m.payload,
	})
	switch {
	case err != nil:
		r.outcome.Refused++
		return false, nil
	case fp.Fallback == fingerprint.FallbackNoDocnum:
		r.outcome.NoFingerprint++
		return false, &fp
	case fp.Fallback != fingerprint.FallbackNone:
		r.outcome.FromDocnum++
	}
	if m.keyed {
		return false, &fp
	}
	c := claim{m.environment, fp.Fingerprint}
	if held, ok := r.holders[c]; ok && m.receivedAt.Sub(held) < r.window {
		r.outcome.Duplicates++
		return true, &fp
	}
	r.holders[c] = m.receivedAt
	return false, &fp
}
