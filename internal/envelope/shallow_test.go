package envelope

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
)

// envelopeCases are bodies whose members the shallow reader must find where
// gjson found them: spacing around every token, escaped names, each kind of
// value before, after and as the payload, and bodies refused as a whole.
var envelopeCases = []string{
	`{"message_type":"ORDERS05","docnum":"1","payload":{"a":1}}`,
	" \n\t{ \"message_type\" :\t\"X\" ,\r\n\"payload\" : [ 1 , { \"b\" : [ ] } ] , \"docnum\" : null }\n ",
	`{"x":"\u0041\"}","message_type":"ORDERS05","payload":["\u00e9",1e3],"docnum":"\u0031"}`,
	`{"message\u005ftype":"X","payload":{}}`,
	`{"message_type":"X","message\u005ftype":"Y","payload":{}}`,
	`{"message_type":"A","message_type":"B","payload":{}}`,
	`{"a\ud800":1,"a\udbff":2,"message_type":"X","payload":1}`,
	`{"":{"":[]},"message_type":"X","payload":""}`,
	`{"message_type":"X","payload":true}`, `{"message_type":"X","payload":false}`,
	`{"message_type":"X","payload":null}`, `{"message_type":"X","payload":-0.5e-7}`,
	`{"message_type":"X","payload":"just text"}`, `{"message_type":"X","payload":{}}`,
	`{"message_type":"X","payload":[]}`, `{"message_type":"X","payload":[[[{}]]],"n":[true,false,null]}`,
	`{"message_type":"X","payload":{"EDI_DC40":{"DOCNUM":"42"}}}`,
	`{"message_type":"X","payload":{"ORDERS05":{"IDOC":{"EDI_DC40":{"DOCNUM":"9"}}}}}`,
	`{"message_type":5,"payload":{}}`, `{"payload":{}}`, `{"message_type":"A"}`, `{}`,
	`["ORDERS05"]`, `"text"`, `12`, `{"message_type":`, "{\"message_type\":\"\xff\"}",
}

// batchCases are batch bodies, each item of which is read as an envelope.
var batchCases = []string{
	`{"messages":[{"message_type":"A","payload":{"x":[1,{"y":2}]}},{"message_type":"B","payload":3,"idempotency_key":"k-1"}]}`,
	` { "other" : { "messages" : [] } , "messages" : [ {"message_type":"A","payload":{}} , 7 , "x" , [ ] , null , {} ] } `,
	`{"messages":[{"message_type":"A","payload":{},"idempotency_key":null},{"message_type":"A","payload":{},"idempotency_key":5},{"message_type":"A","payload":{},"idempotency_key":""}]}`,
	`{"messages":[{"message_type":"A","payload":{},"idempotency_key":"\u006b\ud800"}]}`,
	`{"messages":[{"message_type":"A","message_type":"A","payload":{}},{"message_type":"B","payload":[]}]}`,
	`{"messages":[]}`, `{"messages":{}}`, `{"messages":"x"}`, `{"messages":null}`, `{}`, `[]`,
	`{"messages":[{"message_type":"A","payload":{}}],"messages":[]}`,
	`{"messages":[{"message_type":"A","payload":{}},{"message_type":"A","payload":{}},{"message_type":"A","payload":{}},{"message_type":"A","payload":{}}]}`,
	`{"messages":[{"message\u005ftype":"A","payload":{"deep":[[[[[[1]]]]]]}}]}`,
	// Containers longer than minNoted at every level, whose ends are noted,
	// beside short ones, whose ends are found again.
	`{"before":{"long":"` + strings.Repeat("x", 600) + `"},"messages":[{"message_type":"A","payload":{"E1EDK01":[{"BELNR":"` +
		strings.Repeat("4", 600) + `"},{"a":[]}],"b":{}}},{"message_type":"B","payload":[` + strings.Repeat(`"\"]}",`, 100) +
		`1],"idempotency_key":"k"},{"message_type":"C","payload":{}}],"after":[` + strings.Repeat(`{"y":[1]},`, 30) + `{}]}`,
}

func TestParseMatchesGJSON(t *testing.T) {
	t.Parallel()
	samples, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	bodies := append([]string(nil), envelopeCases...)
	for _, path := range samples {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		bodies = append(bodies, string(b))
	}
	for _, body := range bodies {
		requireParseMatches(t, []byte(body))
	}
}

func TestParseBatchMatchesGJSON(t *testing.T) {
	t.Parallel()
	for _, body := range batchCases {
		requireParseBatchMatches(t, []byte(body), 3)
	}
	// Every single envelope as the only item of a batch, and all of them in
	// one batch.
	items := make([]string, len(envelopeCases))
	for i, env := range envelopeCases {
		items[i] = strings.TrimSpace(env)
		requireParseBatchMatches(t, []byte(`{"messages":[`+items[i]+`]}`), 3)
	}
	requireParseBatchMatches(t, []byte(`{"messages":[`+strings.Join(items, ",")+`]}`), len(items))
}

// TestNotesStayFewWhateverTheShape holds the notes of containers' ends to a
// sixteenth of the body's bytes for bodies made of the smallest containers
// at every level noted, and checks that the members and items are still
// found where gjson finds them.
func TestNotesStayFewWhateverTheShape(t *testing.T) {
	t.Parallel()
	item := `{"message_type":"A","payload":[` + strings.Repeat(`[],{},`, 90) + `[]]}`
	for _, body := range []string{
		`{"x":[` + strings.Repeat(`[],`, 100_000) + `[]],"messages":[` + item + `]}`,
		`{"messages":[` + strings.Repeat(`[],`, 100_000) + `[]]}`,
		`{"messages":[` + strings.Repeat(item+`,`, 2_000) + item + `]}`,
		`{"messages":[` + strings.Repeat(`{"message_type":"A","payload":{},"x":[`+strings.Repeat(`{},`, 200)+`{}]},`, 1_000) + item + `]}`,
	} {
		s, err := checkShallow([]byte(body), 4)
		require.NoError(t, err)
		require.LessOrEqual(t, len(s.ends.noted)*int(unsafe.Sizeof(span{})), len(body)/16, "notes of %.40q…", body)
		requireParseBatchMatches(t, []byte(body), 100)
		requireParseBatchMatches(t, []byte(body), 5_000)
	}
}

func FuzzParseMatchesGJSON(f *testing.F) {
	for _, body := range envelopeCases {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		requireParseMatches(t, body)
	})
}

func FuzzParseBatchMatchesGJSON(f *testing.F) {
	for _, body := range batchCases {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		requireParseBatchMatches(t, body, 3)
	})
}

func requireParseMatches(t *testing.T, body []byte) {
	t.Helper()
	got, gotErr := Parse(body)
	want, wantErr := gjsonParse(body)
	requireSameError(t, body, gotErr, wantErr)
	require.Equal(t, want, got, "Parse(%q)", body)
}

func requireParseBatchMatches(t *testing.T, body []byte, maxItems int) {
	t.Helper()
	got, gotErr := ParseBatch(body, maxItems)
	want, wantErr := gjsonParseBatch(body, maxItems)
	requireSameError(t, body, gotErr, wantErr)
	require.Equal(t, want, got, "ParseBatch(%q)", body)
}

func requireSameError(t *testing.T, body []byte, got, want error) {
	t.Helper()
	if want == nil {
		require.NoError(t, got, "gjson reads %q", body)
		return
	}
	g, ok := apperr.As(got)
	require.True(t, ok, "%q: %v, gjson's reading refuses it with %v", body, got, want)
	w, _ := apperr.As(want)
	require.Equal(t, w.Type, g.Type, "%q", body)
	require.Equal(t, w.Detail, g.Detail, "%q", body)
}

func BenchmarkParseBatch(b *testing.B) {
	item, err := os.ReadFile(filepath.Join("testdata", "orders05.json"))
	require.NoError(b, err)
	items := make([]string, 100)
	for i := range items {
		items[i] = `{"message_type":"ORDERS05","docnum":"1","payload":` + string(item) + `}`
	}
	body := []byte(`{"messages":[` + strings.Join(items, ",") + `]}`)
	for _, parse := range []struct {
		name  string
		parse func([]byte, int) ([]BatchItem, error)
	}{{"gjson", gjsonParseBatch}, {"shallow", ParseBatch}} {
		b.Run(parse.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parse.parse(body, 100); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
