-- name: AuditEventInsert :exec
INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details)
VALUES (@tenant_id, @environment_id, @message_type_id, @message_id, @action, @actor, @match_key, @details);

-- name: AuditEventCount :one
SELECT count(*) FROM audit_events WHERE tenant_id = @tenant_id AND action = @action;
