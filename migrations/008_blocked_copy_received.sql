-- +goose Up
-- A blocked copy keeps what it arrived as, as a message does (migration
-- 007): the Content-Type and, when that was not JSON (IDoc-XML), the bytes
-- received, with payload holding the JSON view that its key paths read, and
-- the place of an IDoc in its packet. A copy released as a message takes
-- them along.
ALTER TABLE blocked_copies
    ADD COLUMN content_type    text NOT NULL DEFAULT 'application/json' CHECK (length(content_type) BETWEEN 1 AND 255),
    ADD COLUMN received_bytes  bytea,
    ADD COLUMN packet_position int CHECK (packet_position >= 1),
    ADD COLUMN packet_size     int CHECK (packet_size >= 2 AND packet_position <= packet_size),
    ADD CONSTRAINT blocked_copies_packet_complete CHECK ((packet_position IS NULL) = (packet_size IS NULL));

-- +goose Down
ALTER TABLE blocked_copies
    DROP CONSTRAINT blocked_copies_packet_complete,
    DROP COLUMN packet_size,
    DROP COLUMN packet_position,
    DROP COLUMN received_bytes,
    DROP COLUMN content_type;
