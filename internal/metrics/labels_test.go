package metrics_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/metrics"
)

// The labels of requests of no single configured type can never be the
// code of a type, so that no type's traffic is counted with them.
func TestLabelsOfNoSingleTypeAreNoTypeCode(t *testing.T) {
	t.Parallel()
	for _, label := range []string{metrics.UnknownMessageType, metrics.MixedMessageTypes} {
		require.ErrorContains(t, messagetype.ValidateCode(label), "reserved", label)
	}
}
