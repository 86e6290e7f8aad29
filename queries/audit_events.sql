-- name: AuditEventInsert :exec
INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details)
VALUES (@tenant_id, @environment_id, @message_type_id, @message_id, @action, @actor, @match_key, @details);

-- name: AuditEventCount :one
SELECT count(*) FROM audit_events WHERE tenant_id = @tenant_id AND action = @action;

-- AuditEventList is a page of the admin's audit log, newest first, keyset
-- paginated on (created_at, id). Every filter is optional (NULL matches
-- anything). scope_tenant_id is the signed-in user's tenant, NULL for a
-- global user, and applies to every row whatever the other filters say, so a
-- tenant-scoped user never sees another tenant's events, nor events outside
-- any tenant. Run it with custom plans (see internal/auditlog) so that the
-- planner drops the unused filters and walks the one index that fits the rest.
-- A message's or a fingerprint's events are a handful, found through their
-- own index; the tenant is then checked on each (tenant_id + 0), never read
-- through the tenant's index, which statistics taken while the log was
-- small made the planner AND with theirs (1.8 million entries of acme's,
-- 140 ms on a page that shows one event).
-- name: AuditEventList :many
SELECT e.id, e.created_at, e.action, e.actor, e.tenant_id, e.message_id, e.match_key, e.details,
       t.slug AS tenant_slug, env.slug AS environment_slug, mt.code AS message_type_code
FROM audit_events e
LEFT JOIN tenants t ON t.id = e.tenant_id
LEFT JOIN environments env ON env.id = e.environment_id
LEFT JOIN message_types mt ON mt.id = e.message_type_id
WHERE (sqlc.narg(scope_tenant_id)::bigint IS NULL
       OR CASE WHEN sqlc.narg(message_id)::bigint IS NULL AND sqlc.narg(match_key)::text IS NULL
               THEN e.tenant_id = sqlc.narg(scope_tenant_id)
               ELSE e.tenant_id + 0 = sqlc.narg(scope_tenant_id) END)
  AND (sqlc.narg(tenant_id)::bigint IS NULL
       OR CASE WHEN sqlc.narg(message_id)::bigint IS NULL AND sqlc.narg(match_key)::text IS NULL
               THEN e.tenant_id = sqlc.narg(tenant_id)
               ELSE e.tenant_id + 0 = sqlc.narg(tenant_id) END)
  AND (sqlc.narg(action)::text IS NULL OR e.action = sqlc.narg(action))
  AND (sqlc.narg(environment_id)::bigint IS NULL OR e.environment_id = sqlc.narg(environment_id))
  AND (sqlc.narg(message_type_id)::bigint IS NULL OR e.message_type_id = sqlc.narg(message_type_id))
  AND (sqlc.narg(message_id)::bigint IS NULL OR e.message_id = sqlc.narg(message_id))
  AND (sqlc.narg(match_key)::text IS NULL OR e.match_key = sqlc.narg(match_key))
  AND (sqlc.narg(content)::text IS NULL
       OR (e.action = 'message.duplicate_blocked' AND e.details->>'content' = sqlc.narg(content)))
  AND (sqlc.narg(since)::timestamptz IS NULL OR e.created_at >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR e.created_at < sqlc.narg(until))
  AND (sqlc.narg(before_time)::timestamptz IS NULL
       OR (e.created_at, e.id) < (sqlc.narg(before_time)::timestamptz, sqlc.narg(before_id)::bigint))
ORDER BY e.created_at DESC, e.id DESC
LIMIT @page_size;

-- AuditEventListInTimeOrder makes the rest of the transaction read the
-- audit log along an index in the page's order rather than sort what a
-- filter matched: auditlog.List sets it for the content filter, whose
-- events audit_events_content_time holds in that order. Statistics taken
-- while audit_events was small count a tenant's changed copies as a
-- handful, and the planner then sorted all of them (180,000 at a busy
-- hub's traffic, 1.6 s) to show fifty.
-- name: AuditEventListInTimeOrder :exec
SELECT set_config('enable_sort', 'off', true);

-- AuditEventLoginLock makes one sign-in at a time, per email and per remote
-- address, count the failures before it, check its password and record its
-- failure: the lock is held to the end of the transaction, so concurrent
-- sign-ins on any replica see each other's failures and the throttle cannot
-- be outrun. Emails and addresses have key spaces of their own (1 and 2),
-- always taken in that order, so two sign-ins never wait for each other in
-- a circle.
-- name: AuditEventLoginLock :exec
SELECT pg_advisory_xact_lock(1, hashtext(lower(@email::text))),
       pg_advisory_xact_lock(2, hashtext(@remote_addr::text));

-- AuditEventLoginFailures counts the failed sign-ins of the last window for
-- an email or from a remote address; the action is a literal so that the
-- partial indexes of migration 002 apply.
-- name: AuditEventLoginFailures :one
SELECT count(*) FROM audit_events
WHERE action = 'user.login_failed'
  AND created_at > now() - make_interval(secs => @window_seconds::float8)
  AND (lower(details->>'email') = lower(@email::text) OR details->>'remote_addr' = @remote_addr::text);
