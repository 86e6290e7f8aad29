-- +goose Up
-- The acknowledgment (X12 997 and TA1, EDIFACT CONTRL) edihub sent for an
-- interchange, which a repeat of it gets again, and the sequence of the
-- control numbers of the acknowledgment interchanges edihub writes.
ALTER TABLE interchanges ADD COLUMN acknowledgment text;
CREATE SEQUENCE interchange_acknowledgment_numbers MINVALUE 1 MAXVALUE 999999999 CYCLE;

-- +goose Down
DROP SEQUENCE interchange_acknowledgment_numbers;
ALTER TABLE interchanges DROP COLUMN acknowledgment;
