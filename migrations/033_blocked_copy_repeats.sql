-- +goose Up
-- A sender that resends a packet sends the same changed copy again: it is
-- blocked again, and each time its audit event says so, but the review
-- queue keeps one open item per changed content, not one per arrival. The
-- row kept is the first arrival's (its sender, its event); copies counts
-- the arrivals and last_seen_at is the latest one's time (NULL while there
-- was only one). A copy decided (released or dismissed) leaves the unique
-- index, so the same content arriving after the decision opens one new
-- item, which the admin sees beside the decision already made.
ALTER TABLE blocked_copies
    ADD COLUMN copies       int NOT NULL DEFAULT 1 CHECK (copies >= 1),
    ADD COLUMN last_seen_at timestamptz CHECK (last_seen_at >= received_at);

-- The open copies that repeat an earlier one fold into it, before the
-- index that keeps them one.
WITH repeats AS (
    SELECT id, original_message_id, content_hash, received_at,
           first_value(id) OVER same AS first_id, count(*) OVER same AS arrivals,
           max(received_at) OVER same AS last_seen
    FROM blocked_copies
    WHERE review_state = 'open'
    WINDOW same AS (PARTITION BY original_message_id, content_hash ORDER BY received_at, id
                    ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
), folded AS (
    UPDATE blocked_copies c SET copies = r.arrivals, last_seen_at = r.last_seen
    FROM repeats r
    WHERE c.id = r.id AND r.id = r.first_id AND r.arrivals > 1
)
DELETE FROM blocked_copies c USING repeats r WHERE c.id = r.id AND r.id <> r.first_id;

-- One open item per original and content: MessageStoreOrBlock and
-- MessageStoreOrBlockAll add an arrival to it (ON CONFLICT), so concurrent
-- resends settle on the one row.
CREATE UNIQUE INDEX blocked_copies_open_content ON blocked_copies (original_message_id, content_hash)
    WHERE review_state = 'open';

-- +goose Down
DROP INDEX blocked_copies_open_content;
ALTER TABLE blocked_copies DROP COLUMN last_seen_at, DROP COLUMN copies;
