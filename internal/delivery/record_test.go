package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
)

// TestRecordHandsThePlaceOnOnlyToAPendingDeliveryWithinTheLimit checks the
// statement that records an attempt and hands its place to the next job
// waiting in the same process: the place moves to a pending delivery of an
// unpaused destination within its limit, and goes back otherwise.
func TestRecordHandsThePlaceOnOnlyToAPendingDeliveryWithinTheLimit(t *testing.T) {
	tb := setup(t)
	ctx := context.Background()
	q := db.On(tb.pool)
	destination := tb.limitedDestination(t, "http://127.0.0.1:1/", 2)
	for _, id := range []string{"1", "2", "3", "4"} {
		tb.receive(t, "production", "ORDERS05", id)
	}
	ids := pgtest.Column[int64](t, tb.pool, "SELECT id FROM deliveries ORDER BY id")
	require.Len(t, ids, 4)

	holder := func(place int32) *int64 {
		var id *int64
		require.NoError(t, tb.pool.QueryRow(ctx,
			"SELECT delivery_id FROM destination_places WHERE destination_id = $1 AND place = $2", destination, place).Scan(&id))
		return id
	}
	take := func(id int64) int32 {
		d, err := q.DeliveryGetForAttempt(ctx, db.DeliveryGetForAttemptParams{ID: id, TtlSeconds: 60})
		require.NoError(t, err)
		require.GreaterOrEqual(t, d.Place, int32(0), "a place is free")
		return d.Place
	}
	record := func(id int64, status string, next *int64) (bool, error) {
		code := int32(200)
		return q.DeliveryRecord(ctx, db.DeliveryRecordParams{
			DeliveryID: id, DestinationID: destination, NextDeliveryID: next, Status: status, Delivered: status == "delivered",
			StartedAt: time.Now(), ResponseStatus: &code, TtlSeconds: 60,
		})
	}

	place := take(ids[0])
	handed, err := record(ids[0], "delivered", &ids[1])
	require.NoError(t, err)
	require.True(t, handed)
	require.Equal(t, &ids[1], holder(place), "the waiting delivery holds the place now")

	handed, err = record(ids[1], "delivered", &ids[0])
	require.NoError(t, err)
	require.False(t, handed, "a delivered delivery gets no place")
	require.Nil(t, holder(place))

	place = take(ids[2])
	handed, err = record(ids[2], "pending", &ids[2])
	require.NoError(t, err)
	require.False(t, handed, "an attempt does not hand its place to its own delivery")
	require.Nil(t, holder(place))

	place = take(ids[2])
	_, err = tb.pool.Exec(ctx, "UPDATE destinations SET paused = true WHERE id = $1", destination)
	require.NoError(t, err)
	handed, err = record(ids[2], "pending", &ids[3])
	require.NoError(t, err)
	require.False(t, handed, "a paused destination's places go back")
	require.Nil(t, holder(place))

	_, err = tb.pool.Exec(ctx, "UPDATE destinations SET paused = false WHERE id = $1", destination)
	require.NoError(t, err)
	take(ids[3])
	place = take(ids[2])
	require.Equal(t, int32(1), place)
	_, err = tb.pool.Exec(ctx, "UPDATE destinations SET max_concurrency = 1 WHERE id = $1", destination)
	require.NoError(t, err)
	_, err = record(ids[2], "pending", &ids[0])
	require.NoError(t, err)
	require.Nil(t, holder(place), "a place above a lowered limit goes back")

	_, err = record(ids[2], "pending", &ids[3])
	require.ErrorIs(t, err, db.ErrNotFound, "an attempt that no longer holds a place has none to hand on")
	require.Equal(t, 4, tb.count(t, "SELECT count(*) FROM delivery_attempts WHERE delivery_id = $1", ids[2]),
		"every attempt is recorded, with a place or without")
}
