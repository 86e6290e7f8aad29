package signature

import "fmt"

// The values of VerifyError.Check. They are stable so that callers can log, count and explain them.
const (
	CheckMissingHeader     = "missing_header"
	CheckMalformedHeader   = "malformed_header"
	CheckTimestamp         = "timestamp_out_of_tolerance"
	CheckSignatureMismatch = "signature_mismatch"
)

// VerifyError reports which check a request failed and on which header. Neither field ever holds
// the secret or the signature the verifier expected, so the error is safe to log and to return to
// the sender.
type VerifyError struct {
	// Check is one of the Check* constants.
	Check string
	// Header is the header the check concerns, spelled as the sender's documentation spells it.
	Header string
	// Detail explains the failure to a human.
	Detail string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("signature: %s check failed on header %s: %s", e.Check, e.Header, e.Detail)
}

func verifyError(check, header, format string, args ...any) *VerifyError {
	return &VerifyError{Check: check, Header: header, Detail: fmt.Sprintf(format, args...)}
}
