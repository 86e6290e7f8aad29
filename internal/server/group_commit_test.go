package server_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// withGroupCommitSettings runs test, in parallel, on a server of its own
// for each setting of GROUP_COMMIT: on (its default lanes), one lane, off.
func withGroupCommitSettings(t *testing.T, test func(t *testing.T, setting string, o *observed)) {
	for _, setting := range []string{"on", "1", "off"} {
		t.Run("GROUP_COMMIT="+setting, func(t *testing.T) {
			t.Parallel()
			test(t, setting, observedServer(t, map[string]string{"GROUP_COMMIT": setting}))
		})
	}
}

// Single messages sent at once, 200 distinct orders and 200 copies of one
// more, with group commit on (its default lanes, and one lane) and off:
// every distinct order is stored once and answered 201, exactly one copy
// is stored and the other 199 name it, each with its audit event. With
// group commit on, some of them shared a transaction.
func TestConcurrentSingleMessagesWithAndWithoutGroupCommit(t *testing.T) {
	t.Parallel()
	withGroupCommitSettings(t, func(t *testing.T, setting string, o *observed) {
		o.messageType(t, "ORDERS05", []string{"id"}, nil)
		const distinct, copies = 200, 200
		responses := sendConcurrently(distinct+copies, func() func() response {
			next := make(chan int, distinct+copies)
			for i := range distinct + copies {
				next <- i
			}
			return func() response {
				id := "the copied order"
				if i := <-next; i < distinct {
					id = fmt.Sprintf("order-%d", i)
				}
				return o.post(t, fmt.Appendf(nil, `{"message_type": "ORDERS05", "payload": {"id": %q}}`, id))
			}
		}())

		created := 0
		copyOf := map[any]int{}
		for _, r := range responses {
			require.Contains(t, []int{http.StatusCreated, http.StatusOK}, r.status, "%s", r.body)
			body := r.json(t)
			if r.status == http.StatusCreated {
				created++
			}
			if body["duplicate"] == true {
				copyOf[body["duplicate_of"]]++
			}
		}
		require.Equal(t, distinct+1, created)
		require.Len(t, copyOf, 1, "every blocked copy names the one stored")
		for _, n := range copyOf {
			require.Equal(t, copies-1, n)
		}
		require.Equal(t, distinct+1, o.messages(t))
		require.Equal(t, distinct+1, o.count(t, `SELECT count(DISTINCT payload->>'id') FROM messages`))
		require.Equal(t, copies-1, o.blockedEvents(t))

		exposition := o.scrape()
		groups := metricValue(t, exposition, "edihub_ingest_group_size_count")
		grouped := metricValue(t, exposition, "edihub_ingest_group_size_sum")
		require.Zero(t, metricValue(t, exposition, "edihub_ingest_group_fallbacks_total"))
		if setting == "off" {
			require.Zero(t, groups)
			return
		}
		require.Equal(t, float64(distinct+copies), grouped, "every single message went through a group")
		require.Less(t, groups, grouped, "some messages shared a transaction")
	})
}

// Retries of keyed single messages (receive-message with an
// Idempotency-Key, an IDoc of its own with one, a webhook with a delivery
// id) sent at once, mixed with copies and new orders by fingerprint and
// with a key reused for other content, with group commit on (its default
// lanes, and one lane) and off: every retry is answered 200 with its key's
// first answer and recorded once, the reused key is refused, nothing more
// is stored, and with group commit on every request went through a group.
func TestConcurrentReplaysWithAndWithoutGroupCommit(t *testing.T) {
	t.Parallel()
	withGroupCommitSettings(t, func(t *testing.T, setting string, o *observed) {
		o.messageType(t, "ORDERS05", []string{"id"}, nil)
		o.messageType(t, "GH_EVENT", []string{"id"}, nil)
		hook := o.integration(t, "GH_EVENT", "github", githubSecret)
		idoc := readFile(t, "orders05.xml")
		const keys, retries, copies, fresh = 10, 10, 40, 40
		type sender func(i int) response
		envelope := func(id string) []byte {
			return fmt.Appendf(nil, `{"message_type": "ORDERS05", "payload": {"id": %q}}`, id)
		}
		keyed := func(i int) response {
			return o.post(t, envelope(fmt.Sprintf("keyed-%d", i)), "Idempotency-Key", fmt.Sprintf("key-%d", i))
		}
		event := func(i int) []byte { return fmt.Appendf(nil, `{"id": "event-%d"}`, i) }
		delivered := func(i int) response {
			return o.webhook(t, hook, event(i), githubHeaders(githubSecret, event(i), fmt.Sprintf("delivery-%d", i))...)
		}
		ownIDoc := func(int) response { return o.postXML(t, idoc, "application/xml", "", "Idempotency-Key", "the idoc") }
		first := map[string][]byte{}
		for i := range keys {
			for name, send := range map[string]sender{"keyed": keyed, "delivered": delivered} {
				r := send(i)
				require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
				first[fmt.Sprintf("%s-%d", name, i)] = r.body
			}
		}
		r := ownIDoc(0)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		first["idoc"] = r.body
		require.Equal(t, http.StatusCreated, o.post(t, envelope("the copied order")).status)
		stored := 2*keys + 1 + 1

		type request struct {
			want  int
			first []byte // the answer a replay repeats
			send  func() response
		}
		var requests []request
		for i := range keys {
			for range retries {
				requests = append(requests,
					request{http.StatusOK, first[fmt.Sprintf("keyed-%d", i)], func() response { return keyed(i) }},
					request{http.StatusOK, first[fmt.Sprintf("delivered-%d", i)], func() response { return delivered(i) }})
			}
		}
		for range retries {
			requests = append(requests, request{http.StatusOK, first["idoc"], func() response { return ownIDoc(0) }})
		}
		for i := range copies {
			requests = append(requests, request{http.StatusOK, nil, func() response { return o.post(t, envelope("the copied order")) }})
			requests = append(requests, request{http.StatusUnprocessableEntity, nil, func() response {
				return o.post(t, envelope("other content"), "Idempotency-Key", fmt.Sprintf("key-%d", i%keys))
			}})
		}
		for i := range fresh {
			requests = append(requests, request{http.StatusCreated, nil, func() response { return o.post(t, envelope(fmt.Sprintf("order-%d", i))) }})
		}
		var sent atomic.Int64
		answered := make([]response, len(requests))
		sendConcurrently(len(requests), func() response {
			i := sent.Add(1) - 1
			answered[i] = requests[i].send()
			return answered[i]
		})
		for i, r := range answered {
			req := requests[i]
			require.Equal(t, req.want, r.status, "%s", r.body)
			switch {
			case req.first != nil:
				require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
				require.Equal(t, string(req.first), string(r.body), "a replay repeats the first answer")
			case req.want == http.StatusUnprocessableEntity:
				require.Equal(t, "idempotency-key-reused", r.json(t)["type"])
			}
		}

		replays := 2*keys*retries + retries
		require.Equal(t, stored+fresh, o.messages(t), "only the new orders are stored")
		require.Equal(t, replays+copies, o.blockedEvents(t))
		require.Equal(t, 2*keys+1, o.count(t, `SELECT count(DISTINCT message_id) FROM audit_events
				WHERE action = 'message.duplicate_blocked' AND details->>'mode' = 'idempotency_key'`))
		require.Equal(t, replays, o.count(t, `SELECT count(*) FROM audit_events
				WHERE action = 'message.duplicate_blocked' AND details->>'mode' = 'idempotency_key'`))

		exposition := o.scrape()
		require.Zero(t, metricValue(t, exposition, "edihub_ingest_group_fallbacks_total"))
		if setting == "off" {
			require.Zero(t, metricValue(t, exposition, "edihub_ingest_group_size_count"))
			return
		}
		require.Equal(t, float64(stored+len(requests)), metricValue(t, exposition, "edihub_ingest_group_size_sum"),
			"every single message, keyed or not, went through a group")
	})
}
