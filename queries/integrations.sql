-- name: IntegrationInsert :one
INSERT INTO integrations (tenant_id, environment_id, message_type_id, scheme)
VALUES (@tenant_id, @environment_id, @message_type_id, @scheme)
RETURNING id;

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
