-- `make bench/admin`'s deliveries: every production message of the last 30
-- days went to its tenant's destination, one attempt each; one in thirty
-- failed for good.
\set ON_ERROR_STOP on
\timing on
INSERT INTO deliveries (tenant_id, environment_id, message_id, destination_id, message_type_id,
                        status, attempts, created_at, last_attempt_at, delivered_at)
SELECT m.tenant_id, m.environment_id, m.id, d.id, m.message_type_id,
       CASE WHEN m.id % 30 = 0 THEN 'failed' ELSE 'delivered' END, 1,
       m.received_at, m.received_at + interval '1 second',
       CASE WHEN m.id % 30 <> 0 THEN m.received_at + interval '1 second' END
FROM messages m
JOIN destinations d ON d.tenant_id = m.tenant_id AND d.environment_id = m.environment_id
WHERE m.received_at > now() - interval '30 days'
ORDER BY m.id;

INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error)
SELECT id, 1, last_attempt_at, 40, CASE WHEN status = 'failed' THEN 500 ELSE 200 END, ''
FROM deliveries ORDER BY id;
ANALYZE deliveries;
ANALYZE delivery_attempts;
