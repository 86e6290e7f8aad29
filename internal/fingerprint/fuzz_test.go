package fingerprint_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/fingerprint"
)

// FuzzCompute feeds arbitrary payloads, paths and docnums to Compute. It must
// never panic, and on valid JSON it must be deterministic and keep the
// invariants of Result.
func FuzzCompute(f *testing.F) {
	f.Add([]byte(`{"ORDERS05":{"IDOC":{"E1EDK01":{"BELNR":"4500012345"}}}}`), "*.IDOC.E1EDK01.BELNR", "900101")
	f.Add([]byte(`{"ORDERS05":{"IDOC":{"E1EDK02":[{"QUALF":"001","BELNR":"1"}]}}}`), poPath, "")
	f.Add([]byte(`{"a":[1,2.0,1e3,-0,true,null,""]}`), "a", "")
	f.Add([]byte(`{"a":{"b":1,"a":[{"y":1,"x":2}]}}`), "a|@reverse", "d")
	f.Add([]byte(`{"a":"M\u00fcller \ud83d\ude00\t"}`), "a", "")
	f.Add([]byte(`{"a":null}`), "a", "")
	f.Add([]byte(`{"a":1e400}`), "a", "x")
	f.Add([]byte(`{"a":`), "a.#.b", "x")
	f.Add([]byte("\xff"), "*", "\xff")
	f.Fuzz(func(t *testing.T, payload []byte, path, docnum string) {
		in := fingerprint.Input{MessageTypeID: 42, Paths: []string{path}, Docnum: docnum, Payload: payload}
		first, err := fingerprint.Compute(in)
		if !json.Valid(payload) {
			return
		}
		second, err2 := fingerprint.Compute(in)
		require.Equal(t, err, err2)
		require.Equal(t, first, second)
		if err != nil {
			return
		}
		require.Len(t, first.Values, 1)
		if first.Fallback == fingerprint.FallbackNoDocnum {
			require.Empty(t, first.Fingerprint)
		} else {
			require.Len(t, first.Fingerprint, 64)
		}
	})
}
