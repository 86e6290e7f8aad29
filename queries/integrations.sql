-- name: IntegrationInsert :one
INSERT INTO integrations (tenant_id, environment_id, message_type_id, scheme, secret)
VALUES (@tenant_id, @environment_id, @message_type_id, @scheme, @secret)
RETURNING id;

-- name: IntegrationGet :one
SELECT * FROM integrations WHERE id = @id;
