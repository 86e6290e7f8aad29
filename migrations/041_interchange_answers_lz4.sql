-- +goose Up
-- An interchange keeps the answer its messages got and the acknowledgment
-- sent for it, to replay both to its repeats: about 20 KB of JSON for an
-- interchange of a hundred messages, compressed as the row is written. With
-- pglz that took PostgreSQL about 175 µs an interchange, with lz4 about 37
-- (docs/performance.md, "Compression of payloads"). As in migration 021,
-- stored values keep their method, and a server built without lz4 keeps
-- pglz.

-- +goose StatementBegin
DO $$
BEGIN
    IF 'lz4' = ANY (SELECT unnest(enumvals) FROM pg_settings WHERE name = 'default_toast_compression') THEN
        ALTER TABLE interchanges ALTER COLUMN response_body SET COMPRESSION lz4,
                                 ALTER COLUMN acknowledgment SET COMPRESSION lz4;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE interchanges ALTER COLUMN response_body SET COMPRESSION DEFAULT,
                         ALTER COLUMN acknowledgment SET COMPRESSION DEFAULT;
