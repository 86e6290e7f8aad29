package fingerprint_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/fingerprint"
)

// A value's text is what an admin types to find it: the string itself, the
// number in its canonical form, an object as canonical JSON, nothing when
// the value is missing.
func TestValueText(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"s": "0045\u00e9", "n": 6149.0, "b": true, "o": {"b": 1, "a": [2]}, "e": "", "z": null, "q": "say \"hi\\"}`)
	res, err := fingerprint.Compute(fingerprint.Input{MessageTypeID: 1, Paths: []string{"s", "n", "b", "o", "e", "z", "gone", "q"}, Payload: payload})
	require.NoError(t, err)
	var texts []string
	for _, v := range res.Values {
		texts = append(texts, v.Text())
	}
	require.Equal(t, []string{"0045é", "6149", "true", `{"a":[2],"b":1}`, "", "", "", `say "hi\`}, texts)
}
