package typeeditor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/edi"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
	"github.com/lefia/edihub/internal/typeeditor"
)

// testBundle is a database with tenant acme, its production environment
// and a message type ORDERS05 that reads the order number.
type testBundle struct {
	pool   *pgxpool.Pool
	ingest *ingest.Service
	types  *typeeditor.Service
	env    db.Environment
	mt     db.MessageType
	admin  auth.User // a global admin
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	b := &testBundle{
		pool: pool, ingest: ingest.New(pool, time.Hour, delivery.NewService(pool, 3)),
		types: typeeditor.New(pool), admin: auth.User{ID: 42, Email: "admin@acme.example", Role: auth.RoleAdmin},
	}
	_, b.env = testfactory.TenantWithEnvironment(t, pool, "acme")
	b.mt = testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"*.IDOC.E1EDK01.BELNR"}})
	return b
}

// receive stores a payload as receive-message would, with the type's
// settings as they are now.
func (b *testBundle) receive(t *testing.T, docnum string, payload []byte) ingest.Result {
	t.Helper()
	ctx := context.Background()
	mt, err := db.On(b.pool).MessageTypeGetByID(ctx, db.MessageTypeGetByIDParams{TenantID: b.env.TenantID, ID: b.mt.ID})
	require.NoError(t, err)
	res, err := b.ingest.Receive(ctx, ingest.Request{
		TenantID: b.env.TenantID, EnvironmentID: b.env.ID, MessageType: messagetype.Prepare(mt), Docnum: docnum, Payload: payload,
		Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, Actor: "test"},
	})
	require.NoError(t, err)
	return res
}

func (b *testBundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	return pgtest.Count(t, b.pool, query, args...)
}

func sample(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return raw
}

// orderNumbered is the sample order with another DOCNUM and order number.
func orderNumbered(t *testing.T, docnum, belnr string) []byte {
	t.Helper()
	p := bytes.ReplaceAll(sample(t, "orders05.json"), []byte("0000000000900101"), []byte(docnum))
	return bytes.ReplaceAll(p, []byte("4500012345"), []byte(belnr))
}

// settingsForm is the form of the bundle's type with other paths.
func (b *testBundle) settingsForm(t *testing.T, paths ...string) typeeditor.Form {
	t.Helper()
	cur, err := b.types.Get(context.Background(), auth.GlobalScope(), b.mt.ID)
	require.NoError(t, err)
	f := typeeditor.FormFor(cur)
	f.Paths = paths
	return f
}

func proposal(t *testing.T, f typeeditor.Form) typeeditor.Proposal {
	t.Helper()
	p, errs := f.Settings()
	require.True(t, errs.Empty(), errs.Error())
	return p
}

func TestUpdateSavesWithAnAuditEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	f := b.settingsForm(t, "*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR")
	f.Window = "48"
	saved, err := b.types.Update(ctx, b.admin, b.mt.ID, proposal(t, f))
	require.NoError(t, err)
	require.Equal(t, int32(2), saved.Version)
	require.Equal(t, []string{"*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"}, saved.Paths)
	require.Equal(t, int32(48), saved.Window())
	require.Equal(t, "acme", saved.Tenant)

	stored, err := b.types.Get(ctx, auth.GlobalScope(), b.mt.ID)
	require.NoError(t, err)
	require.Equal(t, saved, stored)

	var actor string
	var details []byte
	var typeID int64
	require.NoError(t, b.pool.QueryRow(ctx,
		`SELECT actor, details, message_type_id FROM audit_events WHERE action = 'message_type.updated'`).Scan(&actor, &details, &typeID))
	require.Equal(t, "user:42", actor)
	require.Equal(t, b.mt.ID, typeID)
	require.JSONEq(t, fmt.Sprintf(`{"message_type_id": %d, "code": "ORDERS05", "version": 2,
		"before": {"duplicate_key_fields": ["*.IDOC.E1EDK01.BELNR"], "duplicate_window_hours": null},
		"after": {"duplicate_key_fields": ["*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"], "duplicate_window_hours": 48}}`, b.mt.ID),
		string(details))

	// Back to no paths and the default window: recorded as [] and null.
	f = b.settingsForm(t)
	f.Window = ""
	_, err = b.types.Update(ctx, b.admin, b.mt.ID, proposal(t, f))
	require.NoError(t, err)
	require.NoError(t, b.pool.QueryRow(ctx,
		`SELECT details->'after' FROM audit_events WHERE action = 'message_type.updated' ORDER BY id DESC LIMIT 1`).Scan(&details))
	require.JSONEq(t, `{"duplicate_key_fields": [], "duplicate_window_hours": null}`, string(details))
}

func TestUpdateRefusesAStaleVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	first := b.settingsForm(t, "*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR")
	second := b.settingsForm(t, "*.IDOC.EDI_DC40.DOCNUM") // opened at the same version
	_, err := b.types.Update(ctx, b.admin, b.mt.ID, proposal(t, first))
	require.NoError(t, err)

	_, err = b.types.Update(ctx, b.admin, b.mt.ID, proposal(t, second))
	var stale *typeeditor.StaleError
	require.ErrorAs(t, err, &stale)
	require.Equal(t, typeeditor.StaleMessage, err.Error())
	require.Equal(t, int32(2), stale.Current.Version)
	require.Equal(t, first.Paths, stale.Current.Paths, "the refusal shows what is stored now")

	stored, err := b.types.Get(ctx, auth.GlobalScope(), b.mt.ID)
	require.NoError(t, err)
	require.Equal(t, first.Paths, stored.Paths, "the first change is kept")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message_type.updated'`))

	// A form without a version (or a garbled one) is never saved either.
	second.Version = ""
	_, err = b.types.Update(ctx, b.admin, b.mt.ID, proposal(t, second))
	require.ErrorAs(t, err, &stale)
}

// Admins who opened the same version and save at the same moment: the
// database lets exactly one through.
func TestConcurrentSavesOfOneVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const admins = 8
	proposals := make([]typeeditor.Proposal, admins)
	for i := range proposals {
		proposals[i] = proposal(t, b.settingsForm(t, fmt.Sprintf("path%d", i)))
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, admins)
	for i, p := range proposals {
		wg.Go(func() {
			<-start
			_, errs[i] = b.types.Update(context.Background(), b.admin, b.mt.ID, p)
		})
	}
	close(start)
	wg.Wait()
	saved := 0
	for _, err := range errs {
		var stale *typeeditor.StaleError
		if err == nil {
			saved++
		} else {
			require.ErrorAs(t, err, &stale)
		}
	}
	require.Equal(t, 1, saved)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message_type.updated'`))
	require.Equal(t, 2, b.count(t, `SELECT version FROM message_types WHERE id = $1`, b.mt.ID))
}

func TestTenantScope(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	globex := testfactory.Tenant(t, b.pool, &testfactory.TenantOpts{Slug: "globex", Name: "Globex"})
	testfactory.MessageType(t, b.pool, &testfactory.MessageTypeOpts{Tenant: "globex", Code: "INVOIC02"})
	globexAdmin := auth.User{ID: 7, Role: auth.RoleAdmin, TenantID: &globex.ID, TenantSlug: "globex"}

	list, err := b.types.List(ctx, globexAdmin.Scope())
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "INVOIC02", list[0].Code)
	list, err = b.types.List(ctx, auth.GlobalScope())
	require.NoError(t, err)
	require.Equal(t, []string{"acme/ORDERS05", "globex/INVOIC02"}, []string{list[0].Tenant + "/" + list[0].Code, list[1].Tenant + "/" + list[1].Code})
	list, err = b.types.List(ctx, auth.Scope{})
	require.NoError(t, err)
	require.Empty(t, list, "the zero scope sees nothing")

	_, err = b.types.Get(ctx, globexAdmin.Scope(), b.mt.ID)
	ae, ok := apperr.As(err)
	require.True(t, ok)
	require.Equal(t, apperr.NotFound, ae.Kind)
	_, err = b.types.Update(ctx, globexAdmin, b.mt.ID, proposal(t, b.settingsForm(t, "x")))
	ae, ok = apperr.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, apperr.NotFound, ae.Kind, "another tenant's type does not exist")

	viewer := auth.User{ID: 8, Role: auth.RoleViewer}
	_, err = b.types.Update(ctx, viewer, b.mt.ID, proposal(t, b.settingsForm(t, "x")))
	require.ErrorIs(t, err, auth.ErrAdminOnly)
	_, err = b.types.Create(ctx, viewer, typeeditor.Proposal{Code: "X", Tenant: "acme"})
	require.ErrorIs(t, err, auth.ErrAdminOnly)
	require.Zero(t, b.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message_type.updated'`))
}

func TestListCountsTheLastSevenDays(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	first := b.receive(t, "1", orderNumbered(t, "1", "4500000001"))
	require.Equal(t, ingest.Created, first.Outcome)
	require.Equal(t, ingest.DuplicateFingerprint, b.receive(t, "1", orderNumbered(t, "1", "4500000001")).Outcome)
	require.Equal(t, ingest.Created, b.receive(t, "2", orderNumbered(t, "2", "4500000002")).Outcome)
	old := b.receive(t, "3", orderNumbered(t, "3", "4500000003"))
	_, err := b.pool.Exec(ctx, `UPDATE messages SET received_at = now() - interval '8 days' WHERE id = $1`, old.MessageID)
	require.NoError(t, err)
	// Audit events are append-only, so an old one is written as old.
	_, err = b.pool.Exec(ctx, `INSERT INTO audit_events (tenant_id, message_type_id, action, actor, created_at)
		VALUES ($1, $2, 'message.duplicate_blocked', 'test', now() - interval '8 days')`, b.env.TenantID, b.mt.ID)
	require.NoError(t, err)

	list, err := b.types.List(ctx, auth.GlobalScope())
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, int64(2), list[0].Received)
	require.Equal(t, int64(1), list[0].Duplicates)
	require.Equal(t, []string{"*.IDOC.E1EDK01.BELNR"}, list[0].Paths)
	require.Nil(t, list[0].WindowHours)
}

// The preview is computed by the same code and with the type's real id as
// ingest: for a stored message under unchanged settings it yields the
// fingerprint ingest stored, and for a pasted payload the fingerprint
// ingest then computes.
func TestPreviewIsWhatIngestComputes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	stored := b.receive(t, "", sample(t, "orders05.json"))
	require.Equal(t, ingest.Created, stored.Outcome)
	var receipt ingest.Receipt
	require.NoError(t, json.Unmarshal(stored.Body, &receipt))

	cur, err := b.types.Get(ctx, auth.GlobalScope(), b.mt.ID)
	require.NoError(t, err)
	ed, err := b.types.Editor(ctx, b.admin, &cur, typeeditor.FormFor(cur))
	require.NoError(t, err)
	require.Len(t, ed.Recent, 1)
	pv := ed.Preview
	require.Equal(t, stored.MessageID, pv.MessageID, "the most recent message by default")
	require.Empty(t, pv.Problem)
	require.Equal(t, *receipt.Fingerprint, pv.Result.Fingerprint)
	require.Equal(t, pv.Stored, pv.Result.Fingerprint)
	require.Equal(t, `"4500012345"`, pv.Result.Values[0].JSON)

	// Proposed paths: a different fingerprint than the stored one.
	f := typeeditor.FormFor(cur)
	f.Paths = []string{"*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"}
	ed, err = b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)
	require.NotEqual(t, pv.Stored, ed.Preview.Result.Fingerprint)
	require.Equal(t, pv.Stored, ed.Preview.Stored)

	// The pasted ORDCHG under the proposal, then ingest after the save.
	change := bytes.Replace(sample(t, "orders05.json"), []byte(`"MESTYP": "ORDERS"`), []byte(`"MESTYP": "ORDCHG"`), 1)
	f.SamplePayload = string(change)
	ed, err = b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)
	require.Zero(t, ed.Preview.MessageID)
	require.Equal(t, "0000000000900101", ed.Preview.Docnum, "read from EDI_DC40 as ingest reads it")
	_, err = b.types.Update(ctx, b.admin, b.mt.ID, proposal(t, f))
	require.NoError(t, err)
	res := b.receive(t, "0000000000900101", change)
	require.Equal(t, ingest.Created, res.Outcome, "ingest reads the type's new paths at once")
	require.NoError(t, json.Unmarshal(res.Body, &receipt))
	require.Equal(t, ed.Preview.Result.Fingerprint, *receipt.Fingerprint)
}

func TestPreviewProblems(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	cur, err := b.types.Get(ctx, auth.GlobalScope(), b.mt.ID)
	require.NoError(t, err)
	preview := func(f typeeditor.Form) typeeditor.Editor {
		t.Helper()
		ed, err := b.types.Editor(ctx, b.admin, &cur, f)
		require.NoError(t, err)
		return ed
	}
	f := typeeditor.FormFor(cur)
	require.Equal(t, "Paste a payload to see what the paths read from it.", preview(f).Preview.Problem, "nothing stored yet")

	f.SamplePayload = `{"a":`
	require.Contains(t, preview(f).Preview.Problem, "The pasted payload cannot be read: ")

	f.SamplePayload = `{"IDOC":{"E1EDK01":{"BELNR":1e999}}}`
	f.Paths = []string{"IDOC.E1EDK01.BELNR"}
	require.Contains(t, preview(f).Preview.Problem, "Ingest would refuse this payload (invalid-payload): ")

	f.SamplePayload = `{"IDOC":{}}`
	f.SampleDocnum = "77"
	ed := preview(f)
	require.Empty(t, ed.Preview.Problem)
	require.True(t, ed.Preview.Result.Values[0].Missing)
	require.Equal(t, "docnum_all_missing", string(ed.Preview.Result.Fallback))
	require.Equal(t, "77", ed.Preview.Docnum)

	f.SamplePayload, f.SampleMessage = "", "123456"
	b.receive(t, "1", orderNumbered(t, "1", "1"))
	require.Equal(t, "There is no message 123456 of type ORDERS05.", preview(f).Preview.Problem)

	f.Window = "0"
	ed = preview(f)
	require.Equal(t, []string{ed.Errors.Window}, ed.Errors.List())
	require.Nil(t, ed.Impact, "nothing is computed while the form has problems")

	// A new type has no id yet: values and fallback, but no fingerprint.
	ed, err = b.types.Editor(ctx, b.admin, nil, typeeditor.Form{Paths: []string{"id"}, SamplePayload: `{"id": 6149}`})
	require.NoError(t, err)
	require.True(t, ed.Preview.Unsaved)
	require.Empty(t, ed.Preview.Result.Fingerprint)
	require.Equal(t, `"6149"`, ed.Preview.Result.Values[0].JSON)
	require.Nil(t, ed.Impact)
	require.Equal(t, []string{"acme"}, ed.Tenants)
}

// An admin who keyed deduplication on the DOCNUM alone considers the
// ORDERS05 preset: the replay of the stored messages shows which repeat
// outputs (new DOCNUM, same order) it would have blocked.
func TestImpactOfAPreset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, err := b.types.Update(ctx, b.admin, b.mt.ID, proposal(t, b.settingsForm(t)))
	require.NoError(t, err)
	for i := range 50 {
		order := i
		if i%5 == 4 {
			order = i - 1 // a repeat output of the order before
		}
		res := b.receive(t, fmt.Sprint(1000+i), orderNumbered(t, fmt.Sprint(1000+i), fmt.Sprint(4500000000+order)))
		require.Equal(t, ingest.Created, res.Outcome, "the DOCNUM differs, so each is stored")
	}
	cur, err := b.types.Get(ctx, auth.GlobalScope(), b.mt.ID)
	require.NoError(t, err)
	f := typeeditor.FormFor(cur)
	f, _ = typeeditor.ParseForm(map[string][]string{"version": {f.Version}, "op": {"preset:orders05"}})
	ed, err := b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)
	im := ed.Impact
	require.NotNil(t, im)
	require.Equal(t, 50, im.Messages)
	require.Equal(t, 0, im.Current.Duplicates)
	require.Equal(t, 50, im.Current.FromDocnum)
	require.Equal(t, 10, im.Proposed.Duplicates)
	require.Equal(t, 10, im.NewlyBlocked, "this change would have blocked 10 of the last 50 messages")
	require.Equal(t, []typeeditor.PathShare{
		{Path: messagetype.IDocORDERS05Paths[0], Matched: 50, Of: 50, Value: `["ORDERS"]`},
		{Path: "*.IDOC.E1EDK01.BELNR", Matched: 50, Of: 50, Value: `"4500000000"`, Varies: true},
	}, im.Paths)
	require.Equal(t, []typeeditor.PathShare{im.Paths[0]}, im.Constant(),
		"only orders were replayed, so the message type tells none apart here")
	require.Empty(t, im.FromDocnum, "every order has its number")

	// A smaller sample replays the most recent messages only: 20 of them,
	// of which 4 repeat an order before them.
	f.SampleSize = "20"
	ed, err = b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)
	require.Equal(t, 20, ed.Impact.Messages)
	require.Equal(t, 4, ed.Impact.NewlyBlocked)

	// A path that matches nothing turns deduplication back to the DOCNUM.
	f.Paths = []string{"*.IDOC.E1EDK01.BELNRX"}
	ed, err = b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)
	require.Equal(t, []typeeditor.PathShare{{Path: "*.IDOC.E1EDK01.BELNRX", Matched: 0, Of: 20}}, ed.Impact.Paths)
	require.Equal(t, 20, ed.Impact.Proposed.FromDocnum)
	require.Zero(t, ed.Impact.NewlyBlocked)
}

func TestCreate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p, errs := typeeditor.Form{Code: "INVOIC02", Tenant: "acme", Paths: []string{"*.IDOC.EDI_DC40.MESTYP"}, Window: "24"}.Creation(b.admin)
	require.True(t, errs.Empty(), errs.Error())
	id, err := b.types.Create(ctx, b.admin, p)
	require.NoError(t, err)
	created, err := b.types.Get(ctx, auth.GlobalScope(), id)
	require.NoError(t, err)
	require.Equal(t, "INVOIC02", created.Code)
	require.Equal(t, int32(24), created.Window())
	require.Equal(t, int32(1), created.Version)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events
		WHERE action = 'message_type.created' AND actor = 'user:42' AND message_type_id = $1`, id))

	_, err = b.types.Create(ctx, b.admin, p)
	var fe typeeditor.Errors
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Equal(t, `message type "INVOIC02" already exists in tenant "acme"`, fe.Code)

	p.Tenant = "nonesuch"
	_, err = b.types.Create(ctx, b.admin, p)
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Equal(t, `tenant "nonesuch" does not exist`, fe.Tenant)
}

// A pasted IDoc-XML document is previewed through its first IDoc's JSON
// view, as ingest reads it: the same values as its JSON form.
func TestPreviewReadsIDocXML(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	cur, err := b.types.Get(ctx, auth.GlobalScope(), b.mt.ID)
	require.NoError(t, err)
	f := typeeditor.FormFor(cur)
	f.SamplePayload = string(sample(t, "orders05.json"))
	asJSON, err := b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)

	f.SamplePayload = string(sample(t, "orders05.xml"))
	asXML, err := b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)
	require.Empty(t, asXML.Preview.Problem)
	require.Equal(t, "0000000000900101", asXML.Preview.Docnum)
	require.Equal(t, `"4500012345"`, asXML.Preview.Result.Values[0].JSON)
	require.Equal(t, asJSON.Preview.Result.Fingerprint, asXML.Preview.Result.Fingerprint)

	f.SamplePayload = `<ORDERS05><IDOC>`
	ed, err := b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)
	require.Contains(t, ed.Preview.Problem, "The pasted IDoc-XML cannot be read: ")
}

// A pasted X12 interchange is previewed set by set, each on its JSON view
// with its own control number as the docnum: what ingest stores for it.
func TestPreviewReadsEachTransactionSetOfAnInterchange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	cur, err := b.types.Get(ctx, auth.GlobalScope(), b.mt.ID)
	require.NoError(t, err)
	raw := sample(t, "x12_850.edi")
	f := typeeditor.FormFor(cur)
	// A browser's textarea sends its lines as CRLF.
	f.SamplePayload = strings.ReplaceAll(string(raw), "\n", "\r\n")
	f.Paths = []string{"BEG.0.BEG03"}
	ed, err := b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)
	require.Empty(t, ed.Preview.Problem)
	require.Equal(t, "000000905", ed.Preview.Interchange)
	require.Len(t, ed.Preview.Sets, 2)
	for i, want := range []string{`"PO-4711"`, `"PO-4712"`} {
		set := ed.Preview.Sets[i]
		require.Equal(t, "850", set.Code)
		require.Equal(t, fmt.Sprintf("%04d", i+1), set.Docnum)
		require.Equal(t, want, set.Result.Values[0].JSON)
		require.Equal(t, fingerprint.FallbackNone, set.Result.Fallback)
	}

	// Under the type's saved paths, which read nothing of an 850, the
	// second set's fingerprint falls back to its control number, exactly
	// as ingest computes it for the set's JSON view.
	f.Paths = cur.Paths
	ed, err = b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)
	ic, err := edi.Parse(raw, edi.DefaultLimits)
	require.NoError(t, err)
	stored := b.receive(t, ic.Messages[1].Docnum, ic.Messages[1].View)
	var computed string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT computed_fingerprint FROM messages WHERE id = $1`, stored.MessageID).Scan(&computed))
	require.Equal(t, fingerprint.FallbackAllMissing, ed.Preview.Sets[1].Result.Fallback)
	require.Equal(t, computed, ed.Preview.Sets[1].Result.Fingerprint)

	f.SamplePayload = strings.Replace(string(raw), "SE*8*0001", "SE*9*0001", 1)
	ed, err = b.types.Editor(ctx, b.admin, &cur, f)
	require.NoError(t, err)
	require.Contains(t, ed.Preview.Problem, "The pasted interchange cannot be read: ")
	require.Empty(t, ed.Preview.Sets)
}
