package db

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
)

// configRows are the records ingest looks up on every request, in numbers
// larger than any hub has, so that a lookup that reads a whole table shows:
// 1,000 tenants with one environment each, 10 message types, 10
// integrations with a secret each and 10 destinations per tenant, and 100
// API keys per environment.
const configRows = `
SET session_replication_role = replica; -- no foreign-key checks: the rows below are consistent
INSERT INTO tenants (slug, name) SELECT 't' || g, 'Tenant ' || g FROM generate_series(1, 1000) g;
INSERT INTO environments (tenant_id, slug) SELECT id, 'production' FROM tenants;
INSERT INTO message_types (tenant_id, code) SELECT t.id, 'TYPE' || g FROM tenants t, generate_series(1, 10) g;
INSERT INTO api_keys (tenant_id, environment_id, key_hash, key_prefix, name)
SELECT e.tenant_id, e.id, sha256(int8send(e.id * 1000 + g)), 'k', 'key ' || g FROM environments e, generate_series(1, 100) g;
INSERT INTO integrations (tenant_id, environment_id, message_type_id, scheme)
SELECT mt.tenant_id, e.id, mt.id, 'standard-webhooks' FROM message_types mt JOIN environments e ON e.tenant_id = mt.tenant_id;
INSERT INTO integration_secrets (integration_id, secret) SELECT id, 'secret' FROM integrations;
INSERT INTO destinations (tenant_id, environment_id, url, secret)
SELECT e.tenant_id, e.id, 'https://example.com/' || g, 'whsec_x' FROM environments e, generate_series(1, 10) g;
INSERT INTO destination_places (destination_id, place) SELECT id, g FROM destinations, generate_series(0, 3) g;
`

// millionMessages are a million messages, nine in ten of them the first
// tenant's, each stored under an idempotency key and every other one
// holding a fingerprint, and a delivery of each of the first 300,000 to
// their tenant's first destination, one in ten pending: the tables every
// ingest statement and every delivery attempt reads; and 100,000
// interchanges of the first tenant, 10 partners of each environment with
// 10 gaps each, which an interchange's statements read. Keys and
// fingerprints rise with the id so that the indexes fill in order, which
// is several times faster than random keys on a busy machine.
const millionMessages = `
SET session_replication_role = replica;
INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash,
                      computed_fingerprint, fingerprint, source_endpoint, idempotency_key)
SELECT e.tenant_id, e.id, e.tenant_id * 10, '{}', decode(repeat('00', 32), 'hex'), fp,
       CASE WHEN g % 2 = 0 THEN fp END, 'receive-message', 'key-' || lpad(g::text, 7, '0')
FROM generate_series(1, 1000000) g
CROSS JOIN LATERAL (SELECT lpad(to_hex(g), 64, '0') AS fp) f
JOIN environments e ON e.tenant_id = CASE WHEN g % 10 = 0 THEN 2 + g % 999 ELSE 1 END;
INSERT INTO idempotency_keys (tenant_id, environment_id, scope, key, request_hash, message_id, response_body, expires_at)
SELECT tenant_id, environment_id, '', idempotency_key, content_hash, id, '{}', now() + interval '1 day'
FROM messages ORDER BY idempotency_key;
INSERT INTO deliveries (tenant_id, environment_id, message_id, destination_id, message_type_id, status)
SELECT m.tenant_id, m.environment_id, m.id, first.id, m.message_type_id,
       CASE WHEN m.id % 10 = 0 THEN 'pending' ELSE 'delivered' END
FROM messages m JOIN (SELECT tenant_id, min(id) AS id FROM destinations GROUP BY tenant_id) first ON first.tenant_id = m.tenant_id
WHERE m.id <= 300000;
INSERT INTO interchange_partners (tenant_id, environment_id, standard, sender, receiver, last_control_number, last_seen, highest)
SELECT e.tenant_id, e.id, 'x12', 'ZZ:PARTNER' || g, 'ZZ:HUB', '100', now(), 100
FROM environments e, generate_series(1, 10) g;
INSERT INTO interchange_gaps (partner_id, control_number, missing_since)
SELECT id, g, now() FROM interchange_partners, generate_series(1, 10) g;
INSERT INTO interchanges (tenant_id, environment_id, standard, sender, receiver, control_number, content_hash, response_body)
SELECT e.tenant_id, e.id, 'x12', 'ZZ:PARTNER', 'ZZ:HUB', lpad(g::text, 9, '0'), decode(repeat('00', 32), 'hex'),
       json_build_object('messages', json_build_array(json_build_object('status', 'accepted', 'id', g)))
FROM generate_series(1, 100000) g JOIN environments e ON e.tenant_id = 1;
`

// lookup is what a statement must narrow through an index: a table and
// a column ("a or b": either) that the table's scan must bind in its index
// condition, with every column of the index before it. A scan of an index that narrows
// only by tenant, and filters the tenant's rows on the rest (or skips
// along them for a later column), is the plan this test exists to catch.
type lookup struct{ table, column string }

// hotStatements are the statements every ingest request runs (single
// messages, batches and packets, webhooks) and every delivery attempt,
// with the lookups each makes.
// A statement that only inserts (its conflict check is the unique index
// itself) makes none and must read no table. docs/performance.md ("Plans")
// lists them with these indexes.
var hotStatements = []struct {
	name    string
	sql     string
	lookups []lookup
}{
	// The key is read, and its last use written at most once a minute,
	// through its hash.
	{"APIKeyGetWithMessageTypes", aPIKeyGetWithMessageTypes,
		[]lookup{{"api_keys", "key_hash"}, {"api_keys", "key_hash"}, {"message_types", "tenant_id"}}},
	{"APIKeyGetByHash", aPIKeyGetByHash, []lookup{{"api_keys", "key_hash"}, {"api_keys", "key_hash"}}},
	{"MessageTypeGetByID", messageTypeGetByID, []lookup{{"message_types", "id"}}},
	{"IntegrationGet", integrationGet, []lookup{{"integrations", "id"}}},
	{"IntegrationSecretsCurrent", integrationSecretsCurrent, []lookup{{"integration_secrets", "integration_id"}}},
	{"MessageInsert", messageInsert, nil},
	{"MessageStoreOrBlock", messageStoreOrBlock, []lookup{{"messages", "fingerprint"}}},
	{"MessageStoreOrBlockAll", messageStoreOrBlockAll, []lookup{{"messages", "fingerprint"}}},
	{"MessageStoreNew", messageStoreNew, []lookup{{"destinations", "tenant_id"}}},
	{"MessageBlockRetransmissions", messageBlockRetransmissions, []lookup{{"messages", "fingerprint"}}},
	{"MessageReleaseFingerprint", messageReleaseFingerprint, []lookup{{"messages", "id or fingerprint"}}},
	{"MessageClaimLocks", messageClaimLocks, nil},
	{"IdempotencyKeyClaimAndStore", idempotencyKeyClaimAndStore, nil},
	{"IdempotencyKeyReplay", idempotencyKeyReplay, []lookup{{"idempotency_keys", "key"}, {"messages", "id"}}},
	{"IdempotencyKeyReplayAll", idempotencyKeyReplayAll, []lookup{{"idempotency_keys", "key"}, {"messages", "id"}}},
	{"IdempotencyKeyComplete", idempotencyKeyComplete, []lookup{{"idempotency_keys", "key"}}},
	{"AuditEventInsert", auditEventInsert, nil},
	{"DeliveryCreateForMessages", deliveryCreateForMessages, []lookup{{"messages", "id"}, {"destinations", "tenant_id"}}},
	{"DeliveryCreateForStored", deliveryCreateForStored, []lookup{{"messages", "fingerprint"}, {"destinations", "tenant_id"}}},
	// An X12 or EDIFACT interchange: its control number's claim, its
	// repeat's answer and audit rows, its partner's sequence.
	{"InterchangeClaim", interchangeClaim, nil},
	{"InterchangeFind", interchangeFind, []lookup{{"interchanges", "control_number"}}},
	{"InterchangeComplete", interchangeComplete, []lookup{{"interchanges", "id"}}},
	{"InterchangeBlockedEvents", interchangeBlockedEvents, []lookup{{"interchanges", "id"}, {"messages", "id"}}},
	{"PartnerCreate", partnerCreate, nil},
	{"PartnerLock", partnerLock, []lookup{{"interchange_partners", "receiver"}}},
	{"PartnerAdvance", partnerAdvance, []lookup{{"interchange_partners", "receiver"}}},
	{"PartnerSeen", partnerSeen, []lookup{{"interchange_partners", "id"}}},
	{"PartnerJumped", partnerJumped, []lookup{{"interchange_partners", "id"}}},
	{"PartnerGapsOpen", partnerGapsOpen, nil},
	{"PartnerGapClose", partnerGapClose, []lookup{{"interchange_partners", "receiver"}, {"interchange_gaps", "control_number"}}},
	// Every attempt of a delivery runs these two.
	{"DeliveryGetForAttempt", deliveryGetForAttempt, []lookup{
		{"deliveries", "id"}, {"destinations", "id"}, {"destination_places", "destination_id"}, {"destination_places", "destination_id"},
		{"deliveries", "id"}, {"messages", "id"}, {"message_types", "id"}, {"destinations", "id"},
	}},
	{"DeliveryRecord", deliveryRecord, []lookup{
		{"deliveries", "id"}, {"deliveries", "id"}, {"destinations", "id"},
		{"deliveries", "id"}, {"destinations", "id"}, {"destination_places", "destination_id"},
	}},
}

// Every hot statement reads through the index of its lookup under
// plan_cache_mode = force_generic_plan, the one plan a pooled connection
// keeps for a statement, on a million messages: with the plan made while
// the tables were empty and kept (as a connection opened at start keeps
// it), made afresh with no statistics (autovacuum off), and made after
// ANALYZE.
func TestHotStatementsKeepIndexPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	load := pgtest.PoolFor(t, pgtest.SuperuserURL(t, url))
	_, err := load.Exec(ctx, configRows)
	require.NoError(t, err)

	early := genericConn(t, url)
	check(t, "empty tables", early, "early")

	_, err = load.Exec(ctx, millionMessages)
	require.NoError(t, err)
	check(t, "plan kept from empty tables", early, "early")

	fresh := genericConn(t, url)
	check(t, "no statistics", fresh, "fresh")

	_, err = load.Exec(ctx, "ANALYZE")
	require.NoError(t, err)
	check(t, "after ANALYZE", fresh, "fresh")
}

// genericConn opens a connection whose every prepared statement runs on a
// generic plan, as a pooled connection's do once PostgreSQL settles on one.
func genericConn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// check explains every hot statement's generic plan on conn, preparing it
// under prefix first if conn has not yet, so that a plan made earlier on
// conn is the one explained. The arguments are NULLs: a generic plan does
// not depend on them, and EXPLAIN runs nothing.
func check(t *testing.T, phase string, conn *pgx.Conn, prefix string) {
	t.Run(phase, func(t *testing.T) {
		ctx := context.Background()
		for _, st := range hotStatements {
			name := prefix + st.name
			desc, err := conn.Prepare(ctx, name, st.sql)
			require.NoError(t, err, st.name)
			args := strings.TrimSuffix(strings.Repeat("NULL, ", len(desc.ParamOIDs)), ", ")
			var raw []byte
			require.NoError(t, conn.QueryRow(ctx, fmt.Sprintf("EXPLAIN (FORMAT JSON) EXECUTE %q(%s)", name, args)).Scan(&raw), st.name)
			scans := pgtest.Scans(t, raw)
			require.Len(t, scans, len(st.lookups), "%s reads only its lookups: %s", st.name, raw)
			for _, want := range st.lookups {
				assert.True(t, slices.ContainsFunc(scans, func(s pgtest.Scan) bool { return narrows(t, conn, s, want) }),
					"%s reads %s through an index bound up to %s: %v\n%s", st.name, want.table, want.column, scans, raw)
			}
		}
	})
}

// narrows says whether s reads l's table through an index whose condition
// binds every column of the index up to and including l's column.
func narrows(t *testing.T, conn *pgx.Conn, s pgtest.Scan, l lookup) bool {
	if s.Relation != l.table || s.Index == "" {
		return false
	}
	var columns []string
	require.NoError(t, conn.QueryRow(context.Background(), `
		SELECT array_agg(a.attname ORDER BY k.ord)
		FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k (attnum, ord)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indexrelid = $1::regclass`, s.Index).Scan(&columns))
	for _, c := range columns {
		if !strings.Contains(s.Cond, "("+c+" = ") {
			return false
		}
		if slices.Contains(strings.Split(l.column, " or "), c) {
			return true
		}
	}
	return false
}
