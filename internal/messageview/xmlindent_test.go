package messageview

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An IDoc sent on one line is laid out one element a line; one sent
// indented comes out the same; XML cut short or not XML is refused.
func TestIndentXML(t *testing.T) {
	oneLine := `<?xml version="1.0" encoding="ISO-8859-1"?><ORDERS05><IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><DOCNUM>0000000000900101</DOCNUM></EDI_DC40>` +
		`<E1EDK01 SEGMENT="1"><BELNR>4500012345</BELNR><BNAME>Einkauf S&amp;D &lt;Süd&gt;</BNAME></E1EDK01></IDOC></ORDERS05>`
	want := `<?xml version="1.0" encoding="ISO-8859-1"?>
<ORDERS05>
  <IDOC BEGIN="1">
    <EDI_DC40 SEGMENT="1">
      <DOCNUM>0000000000900101</DOCNUM>
    </EDI_DC40>
    <E1EDK01 SEGMENT="1">
      <BELNR>4500012345</BELNR>
      <BNAME>Einkauf S&amp;D &lt;Süd&gt;</BNAME>
    </E1EDK01>
  </IDOC>
</ORDERS05>`
	got, ok := indentXML(oneLine)
	require.True(t, ok)
	require.Equal(t, want, got)
	again, ok := indentXML(want)
	require.True(t, ok)
	require.Equal(t, want, again, "indented already, the same")

	for _, bad := range []string{oneLine[:len(oneLine)-20], "ISA*00*", "<a><b></a>"} {
		_, ok := indentXML(bad)
		require.False(t, ok, bad)
	}
}
