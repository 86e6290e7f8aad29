package notify

import (
	"fmt"
	"net/mail"
	"strings"
)

// maxAddressLength is the longest email address SMTP carries (RFC 5321's
// 254 bytes of a path less its brackets).
const maxAddressLength = 254

// ValidateAddress checks that addr is one bare email address, such as
// ops@example.com, which an email channel sends to: no display name, no
// list, nothing a header or an SMTP command could be made of beside it.
func ValidateAddress(addr string) error {
	a, err := parseAddress(addr)
	if err != nil {
		return err
	}
	if a.Name != "" || a.Address != addr {
		return fmt.Errorf("%q is not a bare email address such as ops@example.com", addr)
	}
	return nil
}

func parseAddress(addr string) (*mail.Address, error) {
	if len(addr) > maxAddressLength {
		return nil, fmt.Errorf("the email address is %d bytes long, more than the %d allowed", len(addr), maxAddressLength)
	}
	a, err := mail.ParseAddress(addr)
	if err != nil || strings.ContainsAny(a.Address, "\r\n") {
		return nil, fmt.Errorf("%q is not an email address such as ops@example.com", addr)
	}
	return a, nil
}
