-- +goose Up
-- A message that arrives as JSON stores its payload exactly as received. One
-- that arrives in another form (IDoc-XML) stores those bytes in
-- received_bytes, with the Content-Type they came with, and its JSON view in
-- payload, which is what key paths, fingerprints and content hashes read. An
-- IDoc of a packet (a document of several IDocs) records its place in it. Batches
-- arrive through an endpoint of their own.
ALTER TABLE messages
    ADD COLUMN content_type    text NOT NULL DEFAULT 'application/json' CHECK (length(content_type) BETWEEN 1 AND 255),
    ADD COLUMN received_bytes  bytea,
    ADD COLUMN packet_position int CHECK (packet_position >= 1),
    ADD COLUMN packet_size     int CHECK (packet_size >= 2 AND packet_position <= packet_size),
    ADD CONSTRAINT messages_packet_complete CHECK ((packet_position IS NULL) = (packet_size IS NULL)),
    DROP CONSTRAINT messages_source_endpoint_check,
    ADD CONSTRAINT messages_source_endpoint_check
        CHECK (source_endpoint IN ('receive-message', 'receive-messages', 'webhook'));

-- +goose Down
ALTER TABLE messages
    DROP CONSTRAINT messages_source_endpoint_check,
    ADD CONSTRAINT messages_source_endpoint_check CHECK (source_endpoint IN ('receive-message', 'webhook')),
    DROP CONSTRAINT messages_packet_complete,
    DROP COLUMN packet_size,
    DROP COLUMN packet_position,
    DROP COLUMN received_bytes,
    DROP COLUMN content_type;
