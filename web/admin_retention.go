package web

import (
	"time"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/retention"
)

// kindNames are the retention page's names of the kinds of data swept.
var kindNames = map[retention.Kind]string{
	retention.IdempotencyKeys:  "Idempotency keys",
	retention.Interchanges:     "Interchanges (control numbers)",
	retention.Messages:         "Messages",
	retention.BlockedCopies:    "Blocked copies",
	retention.DeliveryAttempts: "Delivery attempts",
	retention.AuditEvents:      "Audit events (months dropped)",
}

// kindName names a kind of data; a kind this build does not know (swept by
// a newer replica during an upgrade) shows as it is stored.
func kindName(k retention.Kind) string {
	if name, ok := kindNames[k]; ok {
		return name
	}
	return string(k)
}

// formatPeriod shows a retention period as it is configured: "90d", or
// "off" for kept forever.
func formatPeriod(d time.Duration) string {
	if d == 0 {
		return "off (kept forever)"
	}
	return config.FormatRetention(d)
}
