-- NotificationCreateForAlert writes one notification for every channel of
-- a tenant (tenant_id NULL: none) and every global channel.
-- name: NotificationCreateForAlert :many
INSERT INTO notifications (channel_id, alert_id, event, rule, title, body, link)
SELECT c.id, sqlc.narg(alert_id)::bigint, @event::text, @rule::text, @title::text, @body::text, @link::text
FROM notification_channels c
WHERE c.tenant_id IS NULL OR c.tenant_id = sqlc.narg(tenant_id)::bigint
ORDER BY c.id
RETURNING id;

-- NotificationInsert writes a notification for one channel: an admin's
-- test, which is sent at once rather than queued.
-- name: NotificationInsert :one
INSERT INTO notifications (channel_id, event, rule, title, body, link)
VALUES (@channel_id, @event, @rule, @title, @body, @link)
RETURNING id;

-- NotificationGetForSend loads a notification with the channel it goes to.
-- name: NotificationGetForSend :one
SELECT n.id, n.alert_id, n.event, n.rule, n.title, n.body, n.link, n.status, n.attempts,
       c.id AS channel_id, c.kind, c.target, c.secret
FROM notifications n
JOIN notification_channels c ON c.id = n.channel_id
WHERE n.id = @id;

-- NotificationRecordAttempt counts an attempt and keeps what the channel
-- answered it: status sent, failed, or pending while it will be tried again.
-- name: NotificationRecordAttempt :exec
UPDATE notifications
SET status = @status::text, attempts = attempts + 1, last_error = @last_error, last_answer = @last_answer,
    sent_at = CASE WHEN @status::text = 'sent' THEN now() END
WHERE id = @id;

-- NotificationListOfChannel lists the latest notifications of a channel
-- within the signed-in user's scope (NULL: a global user), newest first;
-- none outside it.
-- name: NotificationListOfChannel :many
SELECT n.id, n.alert_id, n.event, n.rule, n.title, n.status, n.attempts, n.last_error, n.last_answer, n.created_at, n.sent_at
FROM notifications n
JOIN notification_channels c ON c.id = n.channel_id
WHERE n.channel_id = @channel_id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id))
ORDER BY n.created_at DESC, n.id DESC
LIMIT @max_rows;

-- NotificationListOfAlert lists the notifications of an alert, oldest
-- first, to the channels the signed-in user's scope holds (NULL: a global
-- user; a tenant's users do not see the global channels).
-- name: NotificationListOfAlert :many
SELECT n.id, n.event, n.status, n.attempts, n.last_error, n.created_at, n.sent_at,
       c.id AS channel_id, c.kind AS channel_kind, c.name AS channel_name
FROM notifications n
JOIN notification_channels c ON c.id = n.channel_id
WHERE n.alert_id = @alert_id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id))
ORDER BY n.created_at, n.id;
