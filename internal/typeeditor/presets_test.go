package typeeditor

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/envelope"
	"github.com/lefia/edihub/internal/fingerprint"
)

// The IDoc files in testdata are copies of the shared samples (made-up
// values); cloudevent_salesorder.json is a made-up S/4HANA business event
// in the CloudEvents 1.0 JSON format.
func sample(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return raw
}

// keyOf computes a sample's fingerprint under a preset as ingest does, the
// docnum read from the payload as a webhook's is.
func keyOf(t *testing.T, key string, payload []byte) fingerprint.Result {
	t.Helper()
	p, ok := PresetByKey(key)
	require.True(t, ok, key)
	res, err := fingerprint.Compute(fingerprint.Input{
		MessageTypeID: 7, Paths: p.Paths, Docnum: envelope.DetectDocnum(payload), Payload: payload,
	})
	require.NoError(t, err)
	return res
}

func values(res fingerprint.Result) []string {
	var vs []string
	for _, v := range res.Values {
		vs = append(vs, v.JSON)
	}
	return vs
}

func TestPresetORDERS05(t *testing.T) {
	t.Parallel()
	order := keyOf(t, "orders05", sample(t, "orders05.json"))
	require.Equal(t, []string{`["ORDERS"]`, `"4500012345"`}, values(order))
	require.Equal(t, fingerprint.FallbackNone, order.Fallback)

	// A retransmission, a repeat output under a new DOCNUM, a resend with a
	// changed item and a converter that made E1EDK02 an array all carry
	// the same order: one business key.
	for _, name := range []string{
		"orders05_resent_same_docnum.json", "orders05_repeat_output_new_docnum.json",
		"orders05_changed_content_same_belnr.json", "orders05_e1edk02_as_array.json",
	} {
		require.Equal(t, order.Fingerprint, keyOf(t, "orders05", sample(t, name)).Fingerprint, name)
	}

	// An order change with the same number is another message.
	change := bytes.Replace(sample(t, "orders05.json"), []byte(`"MESTYP": "ORDERS"`), []byte(`"MESTYP": "ORDCHG"`), 1)
	require.NotEqual(t, order.Fingerprint, keyOf(t, "orders05", change).Fingerprint)
}

func TestPresetINVOIC02(t *testing.T) {
	t.Parallel()
	invoice := sample(t, "invoic02.json")
	res := keyOf(t, "invoic02", invoice)
	require.Equal(t, []string{`"9000004711"`}, values(res),
		"the invoice number of qualifier 009, not the order (001) or delivery (012) number")

	// A converter writes a lone E1EDK02 as an object: an invoice that
	// carries only its own number yields the same key.
	var doc map[string]map[string]map[string]any
	require.NoError(t, json.Unmarshal(invoice, &doc))
	idoc := doc["INVOIC02"]["IDOC"]
	idoc["E1EDK02"] = idoc["E1EDK02"].([]any)[0]
	single, err := json.Marshal(doc)
	require.NoError(t, err)
	require.Contains(t, string(single), `"E1EDK02":{`)
	require.Equal(t, res.Fingerprint, keyOf(t, "invoic02", single).Fingerprint)

	// The repeat output of the invoice under a new DOCNUM is the same invoice.
	repeat := bytes.Replace(invoice, []byte(`"0000000000700042"`), []byte(`"0000000000700043"`), 1)
	require.Equal(t, res.Fingerprint, keyOf(t, "invoic02", repeat).Fingerprint)
}

// TestPresetsFallBackToTheDocnum proves that the IDoc presets carry
// business identity only: a document without the number they read is
// told apart by its DOCNUM instead of sharing a fingerprint with every
// other such document (SPEC.md, Mode 2). Before, the constant MESTYP made
// every invoice without a reference of qualifier 009 one document.
func TestPresetsFallBackToTheDocnum(t *testing.T) {
	t.Parallel()
	tests := []struct {
		preset, sample string
		withoutKey     func([]byte) []byte
	}{
		{"orders05", "orders05.json", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"BELNR": "4500012345",`), nil, 1)
		}},
		{"orders05", "orders05.json", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"BELNR": "4500012345",`), []byte(`"BELNR": "",`), 1)
		}},
		{"invoic02", "invoic02.json", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"QUALF": "009"`), []byte(`"QUALF": "010"`), 1)
		}},
	}
	for _, tt := range tests {
		first := tt.withoutKey(sample(t, tt.sample))
		require.NotEqual(t, sample(t, tt.sample), first, "%s: the edit must remove the key", tt.preset)
		docnum := envelope.DetectDocnum(first)
		second := bytes.Replace(first, []byte(`"`+docnum+`"`), []byte(`"0000000000123456"`), 1)

		a, b := keyOf(t, tt.preset, first), keyOf(t, tt.preset, second)
		require.Equal(t, fingerprint.FallbackAllMissing, a.Fallback, tt.preset)
		for _, v := range a.Values {
			require.True(t, v.Missing, "%s: %s yields %s", tt.preset, v.Path, v.JSON)
		}
		require.NotEqual(t, a.Fingerprint, b.Fingerprint, "%s: two documents without the key are two documents", tt.preset)
		require.Equal(t, a.Fingerprint, keyOf(t, tt.preset, first).Fingerprint, "%s: a resend is still a duplicate", tt.preset)
	}
}

func TestPresetCloudEvents(t *testing.T) {
	t.Parallel()
	event := sample(t, "cloudevent_salesorder.json")
	res := keyOf(t, "cloudevents", event)
	require.Equal(t, []string{`"/default/sap.s4.beh/Q01CLNT200"`, `"c3a6f0e2-8f1d-4b59-9d7e-2f0a6e1b7c41"`}, values(res))

	// A redelivery is the same event; the same id from another source is not.
	again := bytes.Replace(event, []byte(`"2026-03-10T10:15:01Z"`), []byte(`"2026-03-10T10:20:07Z"`), 1)
	require.Equal(t, res.Fingerprint, keyOf(t, "cloudevents", again).Fingerprint)
	other := bytes.Replace(event, []byte("Q01CLNT200"), []byte("P01CLNT100"), 1)
	require.NotEqual(t, res.Fingerprint, keyOf(t, "cloudevents", other).Fingerprint)
}

func TestPresetsAreValidSettings(t *testing.T) {
	t.Parallel()
	for _, p := range Presets {
		f, save := ParseForm(map[string][]string{"path": {"x"}, "op": {"preset:" + p.Key}})
		require.False(t, save)
		require.Equal(t, p.Paths, f.Paths, p.Key)
		_, errs := f.Settings()
		require.True(t, errs.Empty(), "%s: %v", p.Key, errs)
	}
}
