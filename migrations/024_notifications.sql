-- +goose Up
-- A notification channel is where people are told about alerts: an email
-- address, a Slack-compatible incoming webhook, or a generic webhook. A
-- channel belongs to a tenant, or, with tenant_id NULL, is global: a global
-- admin's channels hear of every alert, a tenant's only of its own.
CREATE TABLE notification_channels (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  bigint REFERENCES tenants (id),
    kind       text NOT NULL CHECK (kind IN ('email', 'slack', 'webhook')),
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    -- An email address, or the URL a webhook posts to.
    target     text NOT NULL CHECK (length(target) BETWEEN 1 AND 2048),
    -- The Standard Webhooks signing secret of a generic webhook (whsec_ +
    -- base64); kept, not hashed, since every notification is signed with it.
    secret     text CHECK (secret LIKE 'whsec\_%'),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'webhook') = (secret IS NOT NULL)),
    CHECK (kind = 'email' OR target ~ '^https?://')
);
CREATE INDEX notification_channels_tenant ON notification_channels (tenant_id);

-- A notification is one message owed to one channel: an alert opened, a
-- reminder, its resolution, or an admin's test. It is written with its
-- River job in the transaction that changes the alert; the row, not the
-- job, is the record admins read, with what the channel said to the last
-- attempt. Deleting a channel deletes what it was owed.
CREATE TABLE notifications (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    channel_id  bigint NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    -- The alert it tells of; NULL for a channel test.
    alert_id    bigint,
    event       text NOT NULL CHECK (event IN ('opened', 'reminder', 'resolved', 'test')),
    rule        text NOT NULL,
    title       text NOT NULL,
    body        text NOT NULL,
    -- The admin page that shows the alert, as a path; the sender makes it
    -- absolute with PUBLIC_URL.
    link        text NOT NULL DEFAULT '',
    status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    attempts    integer NOT NULL DEFAULT 0,
    last_error  text NOT NULL DEFAULT '',
    -- What the channel answered the last attempt: an HTTP status and the
    -- start of the body, or the SMTP server's reply.
    last_answer text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    sent_at     timestamptz
);
CREATE INDEX notifications_channel_created ON notifications (channel_id, created_at DESC, id DESC);
CREATE INDEX notifications_alert ON notifications (alert_id) WHERE alert_id IS NOT NULL;

-- +goose Down
DROP TABLE notifications;
DROP TABLE notification_channels;
