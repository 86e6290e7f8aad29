-- PartnerCreate records the first interchange of a sender and receiver.
-- It returns no row when the pair is known (perhaps since a concurrent
-- transaction's insert, which it waited for): PartnerLock then reads it.
-- name: PartnerCreate :one
INSERT INTO interchange_partners (tenant_id, environment_id, standard, sender, receiver, last_control_number, last_seen, run_start, highest)
VALUES (@tenant_id, @environment_id, @standard, @sender, @receiver, @control_number, now(), sqlc.narg(number), sqlc.narg(number))
ON CONFLICT (tenant_id, environment_id, standard, sender, receiver) DO NOTHING
RETURNING id;

-- PartnerLock reads a known pair and locks it until the transaction ends,
-- so that the interchanges of one pair update its numbers one at a time.
-- name: PartnerLock :one
SELECT id, run_start, highest
FROM interchange_partners
WHERE tenant_id = @tenant_id AND environment_id = @environment_id AND standard = @standard
  AND sender = @sender AND receiver = @receiver
FOR UPDATE;

-- PartnerAdvance records the interchange of a known pair whose number is
-- the next of its run (its highest plus one), as nearly every
-- interchange's is, and locks the pair's row until the transaction ends,
-- in one statement: what PartnerLock and PartnerSeen do then. It returns
-- no row and changes nothing for any other number, or an unknown pair.
-- name: PartnerAdvance :one
UPDATE interchange_partners
SET last_control_number = @control_number, last_seen = now(), highest = @number
WHERE tenant_id = @tenant_id AND environment_id = @environment_id AND standard = @standard
  AND sender = @sender AND receiver = @receiver AND highest + 1 = @number
RETURNING id;

-- PartnerSeen records an interchange of a locked pair and its current run.
-- name: PartnerSeen :exec
UPDATE interchange_partners
SET last_control_number = @control_number, last_seen = now(), run_start = sqlc.narg(run_start), highest = sqlc.narg(highest)
WHERE id = @id;

-- PartnerJumped records a jump too long to list as gaps.
-- name: PartnerJumped :exec
UPDATE interchange_partners SET jump_from = @jump_from, jump_to = @jump_to, jumped_at = now() WHERE id = @id;

-- PartnerGapsOpen records the numbers from @first to @last as missing.
-- name: PartnerGapsOpen :exec
INSERT INTO interchange_gaps (partner_id, control_number, missing_since)
SELECT @partner_id, n, now() FROM generate_series(@first::bigint, @last::bigint) AS n
ON CONFLICT DO NOTHING;

-- PartnerGapClose records a missing number's arrival at the pair named by
-- its parties (as it may run in one batch with PartnerAdvance, before the
-- pair's id is known); it deletes nothing when the number was not missing.
-- name: PartnerGapClose :execrows
DELETE FROM interchange_gaps
WHERE control_number = @control_number
  AND partner_id = (SELECT id FROM interchange_partners
                    WHERE tenant_id = @tenant_id AND environment_id = @environment_id AND standard = @standard
                      AND sender = @sender AND receiver = @receiver);

-- PartnerList is one page of the partners page: the pairs seen within the
-- scope and filter, newest first, each with its gaps missing since before
-- @missing_before (their count, and the lowest @gaps_shown of them).
-- name: PartnerList :many
SELECT p.id, t.slug AS tenant_slug, e.slug AS environment_slug, p.standard, p.sender, p.receiver,
       p.last_control_number, p.last_seen, p.jump_from, p.jump_to, p.jumped_at,
       g.open_gaps, g.first_gaps::bigint[] AS first_gaps
FROM interchange_partners p
JOIN tenants t ON t.id = p.tenant_id
JOIN environments e ON e.id = p.environment_id
CROSS JOIN LATERAL (
    SELECT count(*) AS open_gaps,
           coalesce((array_agg(control_number ORDER BY control_number))[1:@gaps_shown::int], '{}') AS first_gaps
    FROM interchange_gaps
    WHERE partner_id = p.id AND missing_since <= @missing_before
) g
WHERE (sqlc.narg(scope_tenant_id)::bigint IS NULL OR p.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(tenant_id)::bigint IS NULL OR p.tenant_id = sqlc.narg(tenant_id))
  AND (sqlc.narg(environment_id)::bigint IS NULL OR p.environment_id = sqlc.narg(environment_id))
  AND (sqlc.narg(standard)::text IS NULL OR p.standard = sqlc.narg(standard))
  AND (NOT @with_gaps_only::boolean OR g.open_gaps > 0)
  AND (sqlc.narg(since)::timestamptz IS NULL OR p.last_seen >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR p.last_seen < sqlc.narg(until))
  AND (sqlc.narg(before_time)::timestamptz IS NULL
       OR (p.last_seen, p.id) < (sqlc.narg(before_time)::timestamptz, sqlc.narg(before_id)::bigint))
ORDER BY p.last_seen DESC, p.id DESC
LIMIT @page_size;

-- PartnerListGaps lists, for the interchange.gap rule, every pair with
-- numbers missing since before @missing_before: how many, since when, and
-- the lowest @gaps_shown of them.
-- name: PartnerListGaps :many
SELECT p.id, p.tenant_id, t.slug AS tenant_slug, e.slug AS environment_slug, p.standard, p.sender, p.receiver,
       count(*) AS open_gaps, min(g.missing_since)::timestamptz AS missing_since,
       ((array_agg(g.control_number ORDER BY g.control_number))[1:@gaps_shown::int])::bigint[] AS first_gaps
FROM interchange_gaps g
JOIN interchange_partners p ON p.id = g.partner_id
JOIN tenants t ON t.id = p.tenant_id
JOIN environments e ON e.id = p.environment_id
WHERE g.missing_since <= @missing_before
GROUP BY p.id, t.slug, e.slug
ORDER BY p.id;
