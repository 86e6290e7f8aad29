-- name: MessageTypeInsert :one
INSERT INTO message_types (tenant_id, code, duplicate_key_fields, duplicate_window_hours)
VALUES (@tenant_id, @code, @duplicate_key_fields, @duplicate_window_hours)
RETURNING *;

-- name: MessageTypeGetByCode :one
SELECT * FROM message_types WHERE tenant_id = @tenant_id AND code = @code;

-- name: MessageTypeGetByID :one
SELECT * FROM message_types WHERE tenant_id = @tenant_id AND id = @id;
