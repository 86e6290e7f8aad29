-- name: IntegrationInsert :one
INSERT INTO integrations (tenant_id, environment_id, message_type_id, scheme, signature_tolerance_seconds)
VALUES (@tenant_id, @environment_id, @message_type_id, @scheme, @signature_tolerance_seconds)
RETURNING id;

-- IntegrationToleranceSet changes the signature timestamp tolerance of an
-- integration the scope holds, returning its tenant and the tolerance it
-- had; no row when the scope holds no such integration.
-- name: IntegrationToleranceSet :one
UPDATE integrations i SET signature_tolerance_seconds = @signature_tolerance_seconds
FROM integrations old
WHERE i.id = @id AND old.id = i.id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR i.tenant_id = sqlc.narg(scope_tenant_id))
RETURNING i.tenant_id, old.signature_tolerance_seconds AS before_seconds;

-- name: IntegrationGet :one
SELECT * FROM integrations WHERE id = @id;

-- name: IntegrationSecretInsert :exec
INSERT INTO integration_secrets (integration_id, secret) VALUES (@integration_id, @secret);

-- IntegrationSecretsCurrent returns the secrets a delivery may be signed
-- with now, newest first (the likeliest to match).
-- name: IntegrationSecretsCurrent :many
SELECT secret FROM integration_secrets
WHERE integration_id = @integration_id AND (expires_at IS NULL OR expires_at > now())
ORDER BY id DESC;

-- IntegrationSecretsExpire makes every current secret of an integration
-- expire at @expires_at at the latest; one that expires sooner keeps its
-- expiry. It returns how many secrets stay current until then.
-- name: IntegrationSecretsExpire :execrows
UPDATE integration_secrets SET expires_at = @expires_at::timestamptz
WHERE integration_id = @integration_id
  AND (expires_at IS NULL OR expires_at > @expires_at::timestamptz);

-- IntegrationGetWithMessageType loads an integration with the message type
-- its deliveries are received as, in one round trip: a webhook names
-- neither, and the type is read afresh for every delivery, so that a
-- changed window applies at once.
-- name: IntegrationGetWithMessageType :one
SELECT sqlc.embed(i), sqlc.embed(mt)
FROM integrations i
JOIN message_types mt ON mt.tenant_id = i.tenant_id AND mt.id = i.message_type_id
WHERE i.id = @id;

-- IntegrationList lists the integrations a signed-in user may see (NULL
-- scope: all), with where their deliveries go.
-- name: IntegrationList :many
SELECT i.id, t.slug AS tenant_slug, e.slug AS environment_slug, mt.code AS message_type_code, i.scheme,
       i.signature_tolerance_seconds, i.created_at
FROM integrations i
JOIN tenants t ON t.id = i.tenant_id
JOIN environments e ON e.tenant_id = i.tenant_id AND e.id = i.environment_id
JOIN message_types mt ON mt.tenant_id = i.tenant_id AND mt.id = i.message_type_id
WHERE sqlc.narg(scope_tenant_id)::bigint IS NULL OR i.tenant_id = sqlc.narg(scope_tenant_id)
ORDER BY t.slug, e.slug, mt.code, i.created_at;

-- IntegrationSecretList lists the secrets of the integrations of the scope,
-- expired ones included, newest first: never a secret itself, which is only
-- for verifying signatures.
-- name: IntegrationSecretList :many
SELECT s.id, s.integration_id, s.created_at, s.expires_at
FROM integration_secrets s
JOIN integrations i ON i.id = s.integration_id
WHERE sqlc.narg(scope_tenant_id)::bigint IS NULL OR i.tenant_id = sqlc.narg(scope_tenant_id)
ORDER BY s.id DESC;

-- IntegrationSecretRevoke makes secrets of an integration of the scope stop
-- at @expires_at, or keeps an earlier expiry: every secret of it, or only
-- @secret_id. It returns the ids of the secrets it found (none when the
-- scope holds no such integration or secret).
-- name: IntegrationSecretRevoke :many
UPDATE integration_secrets s SET expires_at = LEAST(coalesce(s.expires_at, 'infinity'), @expires_at::timestamptz)
FROM integrations i
WHERE i.id = s.integration_id AND s.integration_id = @integration_id
  AND (sqlc.narg(secret_id)::bigint IS NULL OR s.id = sqlc.narg(secret_id))
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR i.tenant_id = sqlc.narg(scope_tenant_id))
RETURNING s.id;

-- IntegrationSecretListExpiring lists the integration secrets whose
-- rotation grace ends after now and at or before until
-- (integration_secrets_expires), for the rule secret.expiring.
-- name: IntegrationSecretListExpiring :many
SELECT s.id, s.integration_id, i.tenant_id, s.expires_at::timestamptz AS ends_at,
       t.slug AS tenant_slug, e.slug AS environment_slug, mt.code AS message_type_code
FROM integration_secrets s
JOIN integrations i ON i.id = s.integration_id
JOIN tenants t ON t.id = i.tenant_id
JOIN environments e ON e.tenant_id = i.tenant_id AND e.id = i.environment_id
JOIN message_types mt ON mt.tenant_id = i.tenant_id AND mt.id = i.message_type_id
WHERE s.expires_at > @now::timestamptz AND s.expires_at <= @until::timestamptz
ORDER BY s.id;
