package web

import (
	"time"

	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/signature"
)

// Integrations is the integrations page.
type Integrations struct {
	List []provision.Integration
	Now  time.Time // what the secrets' states are judged against
	// WebhookBase is the address senders reach edihub at (PUBLIC_URL, or
	// the request's own), which each integration's webhook URL begins with.
	WebhookBase string
	// NewSecret is a secret just given to the integration NewSecretFor,
	// shown in this answer only.
	NewSecret    string
	NewSecretFor string
	// Revoked is a secret just revoked, confirmed only if listed as revoked,
	// so that a crafted link cannot make the page claim anything.
	Revoked int64
	// ToleranceSet is an integration whose signature tolerance was just
	// changed, confirmed only if listed, like Revoked.
	ToleranceSet string
	Problem      string
}

// ToleranceShown reports whether the page confirms a change of
// ToleranceSet's tolerance: an integration listed whose scheme has one.
func (v Integrations) ToleranceShown(in provision.Integration) bool {
	return in.ID.String() == v.ToleranceSet && timestamped(in)
}

// timestamped reports whether in's senders sign the time of sending, which
// is checked against the integration's tolerance.
func timestamped(in provision.Integration) bool { return signature.Scheme(in.Scheme).Timestamped() }

// RevokedShown reports whether the page confirms the revocation of Revoked.
func (v Integrations) RevokedShown() bool {
	for _, in := range v.List {
		for _, s := range in.Secrets {
			if s.ID == v.Revoked && provision.CredentialState(s.ExpiresAt, v.Now) == "revoked" {
				return true
			}
		}
	}
	return false
}

// hasSecrets reports whether an integration's senders sign with secrets;
// bearer senders present API keys instead.
func hasSecrets(in provision.Integration) bool { return in.Scheme != string(signature.Bearer) }

// hasLiveSecret reports whether any secret of in works at now: then a new
// secret is a rotation, with a grace period for the old ones.
func hasLiveSecret(in provision.Integration, now time.Time) bool {
	for _, s := range in.Secrets {
		if provision.CredentialState(s.ExpiresAt, now) != "revoked" {
			return true
		}
	}
	return false
}

// ownSecret reports whether the senders of a scheme issue their secret
// themselves, so that the admin types it rather than edihub generating one.
func ownSecret(in provision.Integration) bool {
	return in.Scheme == string(signature.Stripe) || in.Scheme == string(signature.Shopify)
}

// toleranceSecondsMax is the longest signature tolerance the form accepts.
var toleranceSecondsMax = int(signature.MaxTolerance / time.Second)

// WebhookURL is the address a sender posts an integration's webhooks to.
func (v Integrations) WebhookURL(in provision.Integration) string {
	return v.WebhookBase + "/api/webhook/" + in.ID.String()
}
