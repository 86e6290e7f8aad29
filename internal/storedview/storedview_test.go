package storedview_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/charmap"

	"github.com/lefia/edihub/internal/edi"
	"github.com/lefia/edihub/internal/idocxml"
	"github.com/lefia/edihub/internal/storedview"
)

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	require.NoError(t, err)
	return b
}

// Each stored form gives the view its message was read with: a payload
// (JSON, or a view stored before migration 040) as it is, an IDoc-XML
// document in the charset its content type names, an interchange's
// message from its segments and frame.
func TestViewOfEachStoredForm(t *testing.T) {
	t.Parallel()
	view, err := storedview.Stored{Payload: []byte(`{"a":1}`), ContentType: "application/json"}.View()
	require.NoError(t, err)
	require.Equal(t, `{"a":1}`, string(view))

	latin1, err := charmap.ISO8859_1.NewEncoder().Bytes([]byte(`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><T>été</T></IDOC></R>`))
	require.NoError(t, err)
	doc, err := idocxml.Parse(latin1, "ISO-8859-1", idocxml.DefaultLimits)
	require.NoError(t, err)
	view, err = storedview.Stored{ContentType: "text/xml; charset=ISO-8859-1", Received: latin1}.View()
	require.NoError(t, err)
	require.Equal(t, string(doc.IDocs[0].View), string(view))
	require.Contains(t, string(view), "été")

	for _, name := range []string{"x12_850.edi", "edifact_invoic_groups.edi"} {
		ic, err := edi.Parse(read(t, filepath.Join("edi", "testdata", name)), edi.DefaultLimits)
		require.NoError(t, err)
		for _, m := range ic.Messages {
			view, err := storedview.Stored{ContentType: "application/edi-x12", Received: m.Bytes, Frame: m.Frame}.View()
			require.NoError(t, err)
			require.Equal(t, string(m.View), string(view), name)
		}
	}

	_, err = storedview.Stored{ContentType: "application/xml"}.View()
	require.Error(t, err, "neither a view nor the bytes it is rebuilt from")
	_, err = storedview.Stored{ContentType: "application/xml", Received: []byte("<R/>")}.View()
	require.Error(t, err, "bytes that are no IDoc")
}
