// Package delivery hands every stored message on to the destinations of its
// tenant and environment, exactly once per destination, on River jobs.
//
// A delivery row is written, with its River job, in the transaction that
// stores the message (Enqueuer.EnqueueTx), so a message is never stored
// without its deliveries and a rolled-back message leaves none. Each
// destination has a River queue of its own: a destination that hangs holds
// only its own queue's workers, and pausing a destination pauses its queue.
// Workers POST the stored payload, signed the Standard Webhooks way, and
// record every attempt on the delivery row, which is what admins read.
package delivery

import (
	"strconv"
	"strings"

	"github.com/riverqueue/river"
)

// Args is a delivery job's arguments: the delivery it makes. Everything
// else is read from the database when the job runs, so a retry sends what
// is stored then, and secrets never sit in the job table.
type Args struct {
	DeliveryID int64 `json:"delivery_id"`
}

// Kind implements river.JobArgs.
func (Args) Kind() string { return "delivery" }

// InsertOpts puts a destination's jobs on its queue.
func insertOpts(destinationID int64, maxAttempts int) *river.InsertOpts {
	return &river.InsertOpts{Queue: QueueName(destinationID), MaxAttempts: maxAttempts}
}

// queuePrefix begins the name of every destination's River queue.
const queuePrefix = "destination_"

// QueueName is the River queue of a destination's deliveries.
func QueueName(destinationID int64) string {
	return queuePrefix + strconv.FormatInt(destinationID, 10)
}

// destinationOfQueue is the destination whose queue is named queue.
func destinationOfQueue(queue string) (int64, bool) {
	rest, ok := strings.CutPrefix(queue, queuePrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}

// WebhookID is the webhook-id header of every attempt of one message to one
// destination: the same on retries, so a receiver can drop a repeat, and
// different for every other message or destination.
func WebhookID(messageID, destinationID int64) string {
	return "msg_" + strconv.FormatInt(messageID, 10) + "_dst_" + strconv.FormatInt(destinationID, 10)
}

// Statuses of a delivery, as stored in deliveries.status.
const (
	StatusPending   = "pending"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
	// StatusCancelled is a delivery that will not be made: its destination
	// was deleted while it was pending or failed.
	StatusCancelled = "cancelled"
)
