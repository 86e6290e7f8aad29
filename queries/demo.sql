-- DemoFound counts what a database holds before the demo is loaded into
-- it, so that `make run` can say what an earlier run left: tenants, live
-- API keys, destinations, and messages up to 10,001, so that a large
-- database answers at once ("more than 10,000").
-- name: DemoFound :one
SELECT (SELECT count(*) FROM tenants) AS tenants,
       (SELECT count(*) FROM (SELECT 1 FROM messages LIMIT 10001) m) AS messages,
       (SELECT count(*) FROM api_keys WHERE revoked_at IS NULL OR revoked_at > now()) AS api_keys,
       (SELECT count(*) FROM destinations) AS destinations;
