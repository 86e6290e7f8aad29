-- +goose Up
-- A message or blocked copy that arrived as IDoc-XML, X12 or EDIFACT is
-- stored as the bytes it came as (received_bytes), and no longer with its
-- JSON view in payload, which is NULL: the view, what key paths,
-- fingerprints and content hashes read, is rebuilt from those bytes when an
-- admin page needs it (package storedview). An X12 view is three times its
-- segments' bytes, and storing it cost PostgreSQL about a third of an
-- interchange's time (docs/performance.md, "Views rebuilt, not stored").
-- A message of an interchange keeps edi_frame beside its segments: the
-- delimiters and character set they are read with and its view's member
-- "interchange" (edi.ViewOf). Rows stored before keep their views. The
-- constraints are added NOT VALID: every earlier row has a payload, which
-- was NOT NULL, so a scan of the tables would find nothing.
ALTER TABLE messages
    ALTER COLUMN payload DROP NOT NULL,
    ADD COLUMN edi_frame json,
    ADD CONSTRAINT messages_view_kept
        CHECK (payload IS NOT NULL OR received_bytes IS NOT NULL) NOT VALID;
ALTER TABLE blocked_copies
    ALTER COLUMN payload DROP NOT NULL,
    ADD COLUMN edi_frame json,
    ADD CONSTRAINT blocked_copies_view_kept
        CHECK (payload IS NOT NULL OR received_bytes IS NOT NULL) NOT VALID;

-- +goose Down
-- A view that was not stored cannot be made in SQL: going back is refused
-- while such rows exist.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM messages WHERE payload IS NULL) OR EXISTS (SELECT FROM blocked_copies WHERE payload IS NULL) THEN
        RAISE EXCEPTION 'messages or blocked copies are stored without their JSON view (migration 040); a schema before it cannot hold them';
    END IF;
END $$;
-- +goose StatementEnd
ALTER TABLE blocked_copies
    DROP CONSTRAINT blocked_copies_view_kept,
    DROP COLUMN edi_frame,
    ALTER COLUMN payload SET NOT NULL;
ALTER TABLE messages
    DROP CONSTRAINT messages_view_kept,
    DROP COLUMN edi_frame,
    ALTER COLUMN payload SET NOT NULL;
