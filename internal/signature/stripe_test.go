package signature

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStripeSignatureVariants(t *testing.T) {
	t.Parallel()
	s := stripeSender()
	valid := s.signature(s.secret, s.body, testNow)
	other := s.signature(s.otherSecret, s.body, testNow)
	ts := "t=" + unix(testNow)
	tests := []struct {
		name      string
		value     string
		wantCheck string
	}{
		{name: "rolled secret, new signature second", value: ts + ",v1=" + other + ",v1=" + valid},
		{name: "timestamp last", value: "v1=" + valid + "," + ts},
		{name: "unknown schemes ignored", value: ts + ",v0=" + other + ",v9=x,v1=" + valid},
		{name: "only v0", value: ts + ",v0=" + valid, wantCheck: CheckSignatureMismatch},
		{name: "too many signatures", value: ts + strings.Repeat(",v1="+other, maxSignatures) + ",v1=" + valid, wantCheck: CheckMalformedHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			header := http.Header{}
			header.Set("Stripe-Signature", tt.value)
			id, err := Verify(Stripe, []string{s.secret}, header, s.body, testNow)
			if tt.wantCheck != "" {
				requireVerifyError(t, err, tt.wantCheck, stripeSignatureHeader, valid, s.secret)
				return
			}
			require.NoError(t, err)
			require.Equal(t, s.signedID, id)
		})
	}
}

func TestStripeDeliveryIDFromBody(t *testing.T) {
	t.Parallel()
	s := stripeSender()
	tests := []struct {
		name string
		body string
		want string
	}{
		{name: "event id", body: `{"object":"event","id":"evt_123"}`, want: "evt_123"},
		{name: "nested id only", body: `{"data":{"id":"evt_123"}}`},
		{name: "numeric id", body: `{"id":123}`},
		{name: "not JSON", body: `{"id":"evt_123"`},
		{name: "empty body", body: ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := []byte(tt.body)
			id, err := Verify(Stripe, []string{s.secret}, s.headers(s.secret, body, testNow), body, testNow)
			require.NoError(t, err)
			require.Equal(t, tt.want, id)
		})
	}
}
