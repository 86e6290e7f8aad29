-- +goose Up
-- traffic_watermark is the rollup's watermark (traffic_rollup_state), for
-- the statements that read the rows after it (queries/traffic_rollups.sql).
-- Read by a sub-select, the watermark is a value the planner does not know:
-- it guessed a third of the table for "created_at >= (SELECT …)" and, on a
-- table whose statistics are old or missing, read the whole table for a
-- tail of seconds (800 ms for a million audit events). A STABLE function
-- that is not SQL (so not inlined back into that sub-select) is evaluated
-- by the planner while it estimates, and once per scan when the statement
-- runs as an index condition, in the statement's snapshot like the
-- sub-select was. It costs a call wherever it is a filter, row by row, so
-- traffic_edge_end, whose bound filters the rows of a window's first hour,
-- keeps the sub-select: those ranges are estimated as ranges already.
-- +goose StatementBegin
CREATE FUNCTION traffic_watermark() RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT rolled_up_to FROM traffic_rollup_state);
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION traffic_watermark;
