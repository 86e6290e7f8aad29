-- DeliveryPlaceReturn gives back the place a delivery's job holds without
-- making its attempt (its process is stopping); DeliveryRecord gives back
-- the place of an attempt made.
-- name: DeliveryPlaceReturn :exec
UPDATE destination_places SET delivery_id = NULL, expires_at = NULL
WHERE destination_id = @destination_id AND delivery_id = @delivery_id::bigint;
