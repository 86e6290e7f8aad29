package egress_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/egress"
)

func TestCheckRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	p, err := egress.ParsePolicy("")
	require.NoError(t, err)
	for _, addr := range []string{
		"127.0.0.1", "::1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "fe80::1",
		"0.0.0.0", "::", "100.64.0.1", "fd00:ec2::254", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "224.0.0.1",
	} {
		err := p.Check(netip.MustParseAddr(addr))
		require.ErrorIs(t, err, egress.ErrForbidden, addr)
	}
	for _, addr := range []string{"93.184.215.14", "8.8.8.8", "2606:4700::1111"} {
		require.NoError(t, p.Check(netip.MustParseAddr(addr)), addr)
	}
}

// An IPv6 address that carries an IPv4 address (IPv4-compatible, SIIT,
// NAT64, 6to4, Teredo) may be delivered to that IPv4 address by a
// translator or tunnel, so it is refused when the IPv4 address would be.
func TestCheckRefusesIPv4AddressesCarriedInIPv6(t *testing.T) {
	t.Parallel()
	p, err := egress.ParsePolicy("")
	require.NoError(t, err)
	for _, addr := range []string{
		"::127.0.0.1", "::10.0.0.1", "::ffff:0:169.254.169.254", "64:ff9b:1::a00:1",
		"2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:101:1::1",
		"2001:0:7f00:1::",              // Teredo server 127.0.0.1
		"2001:0:808:808:0:0:f5ff:fffe", // Teredo client 10.0.0.1, inverted
	} {
		require.ErrorIs(t, p.Check(netip.MustParseAddr(addr)), egress.ErrForbidden, addr)
	}
	require.ErrorContains(t, p.Check(netip.MustParseAddr("2002:7f00:1::")), "carries the loopback address 127.0.0.1")
	for _, addr := range []string{"2002:808:808::1", "2001:0:808:808:0:0:f7f7:f7f7"} {
		require.NoError(t, p.Check(netip.MustParseAddr(addr)), addr)
	}
	for _, raw := range []string{"http://[::127.0.0.1]/hook", "http://[2002:7f00:1::]/hook"} {
		_, err := p.CheckURL(context.Background(), net.DefaultResolver, raw)
		require.ErrorIs(t, err, egress.ErrForbidden, raw)
	}
}

func TestAllowedCIDRsOpenOnlyTheirRanges(t *testing.T) {
	t.Parallel()
	p, err := egress.ParsePolicy(" 127.0.0.0/8, 10.0.0.0/16 ")
	require.NoError(t, err)
	require.NoError(t, p.Check(netip.MustParseAddr("127.0.0.1")))
	require.NoError(t, p.Check(netip.MustParseAddr("::ffff:127.0.0.1")))
	require.NoError(t, p.Check(netip.MustParseAddr("10.0.9.9")))
	require.ErrorIs(t, p.Check(netip.MustParseAddr("10.1.0.1")), egress.ErrForbidden)
	require.ErrorIs(t, p.Check(netip.MustParseAddr("169.254.169.254")), egress.ErrForbidden)

	_, err = egress.ParsePolicy("10.0.0.0/33")
	require.ErrorContains(t, err, "10.0.0.0/33")
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, err := egress.ParsePolicy("")
	require.NoError(t, err)
	for raw, want := range map[string]string{
		"ftp://example.com/":             "http:// or https://",
		"http://user:pw@93.184.215.14/":  "user name",
		"http:///path":                   "no host",
		"http://127.0.0.1:8080/hook":     "loopback",
		"http://[::1]/hook":              "loopback",
		"http://169.254.169.254/latest/": "link-local",
		"http://localhost:9/hook":        "loopback",
		"https://10.0.0.5/hook":          "private",
	} {
		_, err := p.CheckURL(ctx, net.DefaultResolver, raw)
		require.ErrorContains(t, err, want, raw)
	}
	url, err := p.CheckURL(ctx, net.DefaultResolver, "https://93.184.215.14/hook")
	require.NoError(t, err)
	require.Equal(t, "https://93.184.215.14/hook", url)
}

// Scheme and host are case-insensitive, so a URL is kept with both in lower
// case, the one form the destinations table accepts; a URL that is not
// printable ASCII, or too long to keep, is refused with a reason.
func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"HTTP://ERP.Example.COM:8443/Path/To?Q=A#F": "http://erp.example.com:8443/Path/To?Q=A#F",
		"  Https://[2606:4700::1111]/hook ":         "https://[2606:4700::1111]/hook",
		"https://example.com/a%20b":                 "https://example.com/a%20b",
	} {
		got, err := egress.NormalizeURL(raw)
		require.NoError(t, err, raw)
		require.Equal(t, want, got, raw)
	}
	for raw, want := range map[string]string{
		"https://example.com/\u202egnp.exe":                               "printable ASCII characters only",
		"https://b\u00fccher.example/":                                    "printable ASCII characters only",
		"https://example.com/a b":                                         "not the one at byte 22",
		"https://example.com/\xff":                                        "printable ASCII characters only",
		"HTTPS://example.com/" + strings.Repeat("a", egress.MaxURLLength): "more than the 2048 allowed",
		"FTP://example.com/":                                              "http:// or https://",
	} {
		_, err := egress.NormalizeURL(raw)
		require.ErrorContains(t, err, want, raw)
	}
}

// TestDialerChecksTheAddressItConnectsTo proves that the check happens at
// connection time on the resolved address: a name (as a rebinding attacker
// would use) that resolves to loopback is refused by the dialer itself.
func TestDialerChecksTheAddressItConnectsTo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	url := "http://localhost:" + port + "/"

	closed, err := egress.ParsePolicy("")
	require.NoError(t, err)
	client := &http.Client{Transport: &http.Transport{DialContext: closed.Dialer(0).DialContext}}
	_, err = client.Get(url)
	require.ErrorIs(t, err, egress.ErrForbidden)

	open, err := egress.ParsePolicy("127.0.0.0/8,::1/128")
	require.NoError(t, err)
	client = &http.Client{Transport: &http.Transport{DialContext: open.Dialer(0).DialContext}}
	resp, err := client.Get(url)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
