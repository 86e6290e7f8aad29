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
	require.Equal(t, []string{`"ORDERS"`, `"4500012345"`}, values(order))
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
	require.Equal(t, []string{`"INVOIC"`, `"9000004711"`}, values(res),
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
