-- +goose Up
-- A stored payload of more than about 2 KB is compressed by PostgreSQL as
-- its row is written, and pglz, the default method, is a fifth of the CPU
-- that storing a 2 KiB IDoc costs PostgreSQL. lz4 compresses the same
-- payload in about a fifth of pglz's time and decompresses faster, for
-- about an eighth more bytes (docs/performance.md, "Compression of
-- payloads"). The method applies to values written from now on; stored ones
-- keep theirs and read as before. A server built without lz4 does not list
-- it among default_toast_compression's values and keeps pglz.

-- +goose StatementBegin
DO $$
BEGIN
    IF 'lz4' = ANY (SELECT unnest(enumvals) FROM pg_settings WHERE name = 'default_toast_compression') THEN
        ALTER TABLE messages ALTER COLUMN payload SET COMPRESSION lz4,
                             ALTER COLUMN received_bytes SET COMPRESSION lz4;
        ALTER TABLE blocked_copies ALTER COLUMN payload SET COMPRESSION lz4,
                                   ALTER COLUMN received_bytes SET COMPRESSION lz4;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE messages ALTER COLUMN payload SET COMPRESSION DEFAULT,
                     ALTER COLUMN received_bytes SET COMPRESSION DEFAULT;
ALTER TABLE blocked_copies ALTER COLUMN payload SET COMPRESSION DEFAULT,
                           ALTER COLUMN received_bytes SET COMPRESSION DEFAULT;
