-- +goose Up
-- A message that claims a fingerprint keeps the hash of its payload's shape
-- form (canon.ShapeHash: every one-item array of an object read as that
-- object) when it differs from its content hash, so that a copy blocked
-- against it that differs only in how a converter wrapped a segment is told
-- apart from one whose content changed. NULL means the shape form is the
-- payload's canonical form, whose hash is content_hash. Messages stored
-- before this column existed read the same way, which is right for all but
-- those holding a one-item array of an object: a copy of one of those that
-- carries the object instead still counts as changed, as it did before. Only the holder of a
-- fingerprint is ever compared, so only the statement that claims one
-- (MessageStoreOrBlock) writes it. Adding a nullable column without a
-- default rewrites nothing.
ALTER TABLE messages ADD COLUMN shape_hash bytea CHECK (length(shape_hash) = 32);

-- +goose Down
ALTER TABLE messages DROP COLUMN shape_hash;
