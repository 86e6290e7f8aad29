package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// Single messages sent at once, 200 distinct orders and 200 copies of one
// more, with group commit on (its default lanes, and one lane) and off:
// every distinct order is stored once and answered 201, exactly one copy
// is stored and the other 199 name it, each with its audit event. With
// group commit on, some of them shared a transaction.
func TestConcurrentSingleMessagesWithAndWithoutGroupCommit(t *testing.T) {
	t.Parallel()
	for _, setting := range []string{"on", "1", "off"} {
		t.Run("GROUP_COMMIT="+setting, func(t *testing.T) {
			t.Parallel()
			o := observedServer(t, map[string]string{"GROUP_COMMIT": setting})
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
}
