package throttle

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clock is a time that only moves when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newAt(c *clock, burst int, interval time.Duration, maxClients int) *Failures {
	f := New(burst, interval, maxClients)
	f.now = c.now
	return f
}

func TestAClientMayFailABurstThenOnceAnInterval(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1_000_000, 0)}
	f := newAt(c, 3, time.Second, 10)
	for range 3 {
		require.Zero(t, f.Wait("192.0.2.1"))
		f.Fail("192.0.2.1")
	}
	require.Equal(t, time.Second, f.Wait("192.0.2.1"))
	require.Zero(t, f.Wait("192.0.2.2"), "another client is not held up")

	c.t = c.t.Add(400 * time.Millisecond)
	require.Equal(t, 600*time.Millisecond, f.Wait("192.0.2.1"), "waiting works")
	c.t = c.t.Add(600 * time.Millisecond)
	require.Zero(t, f.Wait("192.0.2.1"))
	f.Fail("192.0.2.1")
	require.Equal(t, time.Second, f.Wait("192.0.2.1"), "one more failure an interval")

	c.t = c.t.Add(time.Hour)
	for range 3 {
		require.Zero(t, f.Wait("192.0.2.1"), "a quiet client gets its burst back")
		f.Fail("192.0.2.1")
	}
}

// An IPv6 host is commonly given a /64 whole, so its addresses are one
// client; IPv4-mapped addresses are their IPv4 address.
func TestClientsAreAddressesOrIPv6Slash64s(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1_000_000, 0)}
	f := newAt(c, 2, time.Minute, 10)
	f.Fail("2001:db8:1:2::1")
	f.Fail("2001:db8:1:2:ffff::9")
	require.Positive(t, f.Wait("2001:db8:1:2::abcd"))
	require.Zero(t, f.Wait("2001:db8:1:3::1"))
	f.Fail("::ffff:192.0.2.7")
	f.Fail("192.0.2.7")
	require.Positive(t, f.Wait("192.0.2.7"))
	f.Fail("not an address")
	f.Fail("neither")
	require.Positive(t, f.Wait("garbage"))
}

// Memory is bounded: past maxClients, the client that failed least
// recently is forgotten.
func TestClientsAreBounded(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1_000_000, 0)}
	f := newAt(c, 1, time.Minute, 2)
	for _, addr := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		f.Fail(addr)
	}
	require.Equal(t, 2, f.clients.Len())
	require.Zero(t, f.Wait("192.0.2.1"))
	require.Positive(t, f.Wait("192.0.2.3"))
}

// Concurrent failures of one client are each counted.
func TestConcurrentFailuresAreCounted(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1_000_000, 0)}
	f := newAt(c, 1, time.Millisecond, 10)
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() { f.Fail("192.0.2.1") })
	}
	wg.Wait()
	require.Equal(t, 100*time.Millisecond, f.Wait("192.0.2.1"))
}
