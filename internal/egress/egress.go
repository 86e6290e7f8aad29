// Package egress decides which addresses edihub may open connections to
// when it delivers messages. A destination URL is chosen by a tenant's
// admin, so without a check it could point edihub at its own loopback
// services, the private network it runs in, or a cloud metadata endpoint
// (server-side request forgery). The check is made on the IP address a
// connection is actually opened to, in the dialer, so a name that resolved
// to a public address when the destination was created and to a private one
// later (DNS rebinding) is still refused.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrForbidden is wrapped by every refusal of an address.
var ErrForbidden = errors.New("egress: address not allowed")

// blocked are ranges that no public service lives in, beyond what netip's
// predicates (loopback, private, link-local, unspecified, multicast)
// already name: shared address space for carrier-grade NAT, the IETF
// protocol assignments, the benchmarking range, documentation ranges, the
// old 6to4 relay anycast and "this network".
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 can reach IPv4 private space
	netip.MustParsePrefix("64:ff9b:1::/48"), // NAT64 of a local network (RFC 8215)
}

// IPv6 ranges whose addresses carry an IPv4 address that a translator, a
// tunnel or the host's own stack may deliver to instead: IPv4-compatible
// (deprecated, RFC 4291), IPv4-translated (SIIT, RFC 2765), NAT64
// (RFC 6052), 6to4 (RFC 3056) and Teredo (RFC 4380). IPv4-mapped addresses
// (::ffff:0:0/96) are unmapped before any check.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
)

// Policy says which addresses connections may go to: every public address,
// plus the ranges an operator opened explicitly.
type Policy struct {
	allowed []netip.Prefix
}

// ParsePolicy reads DESTINATION_ALLOWED_CIDRS: comma-separated CIDR ranges
// that are allowed even though they are loopback, private or otherwise
// refused (a test receiver on 127.0.0.1, a destination on the company
// network). Empty allows only public addresses.
func ParsePolicy(cidrs string) (Policy, error) {
	var p Policy
	for field := range strings.SplitSeq(cidrs, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(field)
		if err != nil {
			return Policy{}, fmt.Errorf("%q is not a CIDR range such as 10.0.0.0/8: %w", field, err)
		}
		p.allowed = append(p.allowed, prefix.Masked())
	}
	return p, nil
}

// Check returns nil when a connection to addr is allowed, else an error
// wrapping ErrForbidden that names the address and why.
func (p Policy) Check(addr netip.Addr) error {
	addr = addr.Unmap()
	for _, prefix := range p.allowed {
		if prefix.Contains(addr) {
			return nil
		}
	}
	if reason := restricted(addr); reason != "" {
		return fmt.Errorf("%w: %s is a %s address (DESTINATION_ALLOWED_CIDRS can open it)", ErrForbidden, addr, reason)
	}
	for _, inner := range embeddedIPv4(addr) {
		if reason := restricted(inner); reason != "" {
			return fmt.Errorf("%w: %s carries the %s address %s (DESTINATION_ALLOWED_CIDRS can open it)", ErrForbidden, addr, reason, inner)
		}
	}
	return nil
}

// embeddedIPv4 returns the IPv4 addresses that the IPv6 address addr
// carries, by the ranges above: a connection to [::127.0.0.1] or
// [2002:7f00:1::] may end at 127.0.0.1, so what it carries is checked as
// if it were the address connected to.
func embeddedIPv4(addr netip.Addr) []netip.Addr {
	if !addr.Is6() {
		return nil
	}
	b := addr.As16()
	v4 := func(at int) netip.Addr { return netip.AddrFrom4([4]byte(b[at : at+4])) }
	switch {
	case ipv4Compatible.Contains(addr), ipv4Translated.Contains(addr), nat64.Contains(addr):
		return []netip.Addr{v4(12)}
	case sixToFour.Contains(addr):
		return []netip.Addr{v4(2)}
	case teredo.Contains(addr):
		// The Teredo server, and the client's address with its bits
		// inverted.
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{v4(4), netip.AddrFrom4(client)}
	}
	return nil
}

func restricted(addr netip.Addr) string {
	switch {
	case addr.IsLoopback():
		return "loopback"
	case addr.IsPrivate():
		return "private"
	case addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast():
		// 169.254.169.254 and fe80::, where cloud metadata services answer.
		return "link-local"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsMulticast(), addr.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, prefix := range blocked {
		if prefix.Contains(addr) {
			return "reserved"
		}
	}
	return ""
}

// MaxURLLength is the longest destination URL kept, in bytes (the
// destinations table checks it).
const MaxURLLength = 2048

// NormalizeURL checks the form of a destination URL and returns it as it is
// kept and dialled: http or https, a host, no user information, printable
// ASCII only, at most MaxURLLength bytes, and the scheme and host in lower
// case. Both are case-insensitive (RFC 3986, 6.2.2.1), so HTTP://Example.COM
// is the same destination as http://example.com, and one spelling keeps the
// stored URLs comparable. Any other character must be %-escaped, and an
// international host name written in its xn-- form: a right-to-left
// override or a raw byte in a URL would make an admin's screen lie about
// where deliveries go.
func NormalizeURL(raw string) (string, error) {
	u, err := normalized(raw)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

func normalized(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if i := strings.IndexFunc(raw, notPrintableASCII); i >= 0 {
		return nil, fmt.Errorf("the URL may hold printable ASCII characters only (escape others as %%XX, write an international host name as xn--…), not the one at byte %d", i+1)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the URL cannot be parsed: %w", err)
	}
	// url.Parse has lowered the scheme already.
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("the URL must start with http:// or https://")
	}
	if u.User != nil {
		return nil, fmt.Errorf("the URL must not carry a user name or password")
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("the URL has no host")
	}
	u.Host = strings.ToLower(u.Host)
	if n := len(u.String()); n > MaxURLLength {
		return nil, fmt.Errorf("the URL is %d bytes long, more than the %d allowed", n, MaxURLLength)
	}
	return u, nil
}

func notPrintableASCII(r rune) bool { return r <= ' ' || r > '~' }

// CheckURL is NormalizeURL, and then every address the host resolves to
// must be allowed now. The dialer checks again at every connection.
func (p Policy) CheckURL(ctx context.Context, resolver *net.Resolver, raw string) (string, error) {
	u, err := normalized(raw)
	if err != nil {
		return "", err
	}
	if err := p.checkHost(ctx, resolver, u.Hostname()); err != nil {
		return "", err
	}
	return u.String(), nil
}

// checkHost checks host, an IP address or a name, and every address a name
// resolves to.
func (p Policy) checkHost(ctx context.Context, resolver *net.Resolver, host string) error {
	if addr, err := netip.ParseAddr(host); err == nil {
		return p.Check(addr)
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("the host %q cannot be resolved: %w", host, err)
	}
	for _, addr := range addrs {
		if err := p.Check(addr); err != nil {
			return fmt.Errorf("the host %q resolves to a refused address: %w", host, err)
		}
	}
	return nil
}

// Dialer returns a dialer that refuses, after name resolution and before
// connecting, every address the policy does not allow.
func (p Policy) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %q is not an IP address and port", ErrForbidden, address)
			}
			return p.Check(ap.Addr())
		},
	}
}

// HTTPClient returns a client for requests to URLs a tenant's admin chose
// (destinations, webhook channels): every connection goes through the
// policy's Dialer, no proxy from the environment is used (the policy checks
// the address edihub connects to, which must be the receiver's), and a
// redirect is returned as the answer rather than followed, since following
// it would send to an address nobody configured. timeout bounds each
// request, from connecting to the end of the answer.
func (p Policy) HTTPClient(timeout time.Duration) *http.Client {
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.Dialer(timeout).DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		// A destination keeps a connection open for each of its places (at
		// most 100), so that no attempt pays for a new connection and TLS
		// handshake while the destination is answering at its limit.
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
	}
	return &http.Client{
		Transport:     transport,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
