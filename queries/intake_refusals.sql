-- Refused ingest answers per API key or integration and minute (migration
-- 023), added by every server from its counts in memory
-- (internal/refusal) and read by the rule intake.refusing.

-- IntakeRefusalAdd adds refusals of one subject in one minute.
-- name: IntakeRefusalAdd :exec
INSERT INTO intake_refusals (subject_kind, subject_key, minute, tenant_id, refusals)
VALUES (@subject_kind, @subject_key, @minute, @tenant_id, @refusals)
ON CONFLICT (subject_kind, subject_key, minute) DO UPDATE SET refusals = intake_refusals.refusals + excluded.refusals;

-- IntakeRefusalListFrequent lists the API keys and integrations refused
-- at least min_refusals times in the minutes after since, with the
-- environment each belongs to.
-- name: IntakeRefusalListFrequent :many
WITH counted AS (
    SELECT r.subject_kind, r.subject_key, r.tenant_id, sum(r.refusals)::bigint AS refusals,
           min(r.minute)::timestamptz AS first_minute
    FROM intake_refusals r
    WHERE r.minute > @since
    GROUP BY r.subject_kind, r.subject_key, r.tenant_id
    HAVING sum(r.refusals) >= @min_refusals::bigint
)
SELECT c.subject_kind, c.subject_key, c.tenant_id, c.refusals, c.first_minute, t.slug AS tenant_slug,
       coalesce(e.slug, '')::text AS environment_slug
FROM counted c
JOIN tenants t ON t.id = c.tenant_id
LEFT JOIN api_keys k ON c.subject_kind = 'api_key' AND k.id::text = c.subject_key
LEFT JOIN integrations i ON c.subject_kind = 'integration' AND i.id::text = c.subject_key
LEFT JOIN environments e ON e.tenant_id = c.tenant_id AND e.id = coalesce(k.environment_id, i.environment_id)
ORDER BY c.subject_kind, c.subject_key;

-- IntakeRefusalDeleteBefore deletes the minutes before before, which no
-- rule reads any more.
-- name: IntakeRefusalDeleteBefore :exec
DELETE FROM intake_refusals WHERE minute < @before;
