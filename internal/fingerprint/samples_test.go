package fingerprint_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/fingerprint"
)

// The files in testdata are copies of shared/samples, kept here so the tests
// run in a clean clone of the repository.
const (
	belnrPath = "*.IDOC.E1EDK01.BELNR"
	poPath    = `[*.IDOC.E1EDK02]|@flatten|#(QUALF=="001").BELNR`
)

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// computeSample fingerprints a sample as the receive endpoint would, with
// the docnum taken from the IDoc control record.
func computeSample(t *testing.T, name string, paths ...string) fingerprint.Result {
	t.Helper()
	payload := readSample(t, name)
	docnum := gjson.GetBytes(payload, "*.IDOC.EDI_DC40.DOCNUM").String()
	require.NotEmpty(t, docnum)
	res, err := fingerprint.Compute(fingerprint.Input{MessageTypeID: 42, Paths: paths, Docnum: docnum, Payload: payload})
	require.NoError(t, err)
	require.NotEmpty(t, res.Fingerprint)
	return res
}

func TestSamplesBusinessKey(t *testing.T) {
	t.Parallel()
	orig := computeSample(t, "orders05.json", belnrPath)
	require.Equal(t, hexOf(`["42","4500012345"]`), orig.Fingerprint)
	for _, name := range []string{
		"orders05_resent_same_docnum.json",
		"orders05_repeat_output_new_docnum.json",
		"orders05_changed_content_same_belnr.json",
	} {
		require.Equal(t, orig.Fingerprint, computeSample(t, name, belnrPath).Fingerprint, name)
	}
}

func TestSamplesDocnumOnly(t *testing.T) {
	t.Parallel()
	orig := computeSample(t, "orders05.json")
	require.Equal(t, fingerprint.FallbackNoPaths, orig.Fallback)
	require.Equal(t, hexOf(`["42","0000000000900101"]`), orig.Fingerprint)

	require.Equal(t, orig.Fingerprint, computeSample(t, "orders05_resent_same_docnum.json").Fingerprint,
		"a retransmission keeps its DOCNUM")
	require.NotEqual(t, orig.Fingerprint, computeSample(t, "orders05_repeat_output_new_docnum.json").Fingerprint,
		"a repeat output gets a new DOCNUM")
}

func TestSamplesSegmentAsObjectOrArray(t *testing.T) {
	t.Parallel()
	obj := computeSample(t, "orders05.json", poPath)
	arr := computeSample(t, "orders05_e1edk02_as_array.json", poPath)
	require.Equal(t, []fingerprint.Value{{Path: poPath, JSON: `"4500012345"`}}, obj.Values)
	require.Equal(t, obj, arr)

	// In the invoice the PO number is the second of three E1EDK02 segments.
	inv := computeSample(t, "invoic02.json", poPath)
	require.Equal(t, obj.Values, inv.Values)
}

// TestSamplesContentHash shows what the content hash adds: a changed order
// with the same BELNR shares the fingerprint but not the content hash, while
// a retransmission shares both.
func TestSamplesContentHash(t *testing.T) {
	t.Parallel()
	hash := func(name string) [32]byte {
		h, err := canon.ContentHash(readSample(t, name))
		require.NoError(t, err)
		return h
	}
	orig := hash("orders05.json")
	require.Equal(t, orig, hash("orders05_resent_same_docnum.json"))
	require.NotEqual(t, orig, hash("orders05_changed_content_same_belnr.json"))
}
