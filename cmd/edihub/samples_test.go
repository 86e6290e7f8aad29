package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
)

// sampleRow is a row of docs/samples/README.md's table: a file, the
// Content-Type it is posted with and the answer documented for it.
type sampleRow struct{ file, contentType, answer string }

var sampleRowPattern = regexp.MustCompile("^\\| `([^`]+)` \\| `([^`]+)` \\| `([^`]+)` \\|")

// Every file of docs/samples, posted in the order of its README's table to
// a real server loaded with the demo, gets the answer the table documents,
// so that neither the samples nor their documentation can rot.
func TestSamplesGetTheirDocumentedAnswers(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "docs", "samples")
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	var rows []sampleRow
	for _, line := range strings.Split(string(readme), "\n") {
		if m := sampleRowPattern.FindStringSubmatch(line); m != nil {
			rows = append(rows, sampleRow{m[1], m[2], m[3]})
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() != "README.md" {
			require.True(t, slices.ContainsFunc(rows, func(r sampleRow) bool { return r.file == e.Name() }),
				"docs/samples/README.md documents %s", e.Name())
		}
	}

	url := pgtest.URL(t)
	out, err := edihub(url, []string{"demo"}).Output()
	require.NoError(t, err)
	key := regexp.MustCompile(`(?m)^api_key=(\S+)$`).FindSubmatch(out)[1]
	_, addr := startServe(t, url)
	for _, row := range rows {
		body, err := os.ReadFile(filepath.Join(dir, row.file))
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/edi-hub/receive-message", bytes.NewReader(body))
		require.NoError(t, err)
		req.SetBasicAuth("sap", string(key))
		req.Header.Set("Content-Type", row.contentType)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var answer struct {
			Status      json.RawMessage `json:"status"`
			Type        string          `json:"type"`
			Interchange *struct {
				Status string `json:"status"`
			} `json:"interchange"`
			Messages []struct {
				Status string `json:"status"`
			} `json:"messages"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer), row.file)
		resp.Body.Close()
		got := []string{strconv.Itoa(resp.StatusCode)}
		switch {
		case answer.Type != "":
			got = append(got, answer.Type)
		case answer.Messages != nil:
			if answer.Interchange != nil {
				got = append(got, answer.Interchange.Status)
			}
			for _, m := range answer.Messages {
				got = append(got, m.Status)
			}
		default:
			var status string
			require.NoError(t, json.Unmarshal(answer.Status, &status), row.file)
			got = append(got, status)
		}
		require.Equal(t, row.answer, strings.Join(got, " "), "the answer to %s", row.file)
	}
	require.Len(t, rows, len(entries)-1, "one row a file")

	// The demo's webhook integration takes a delivery signed as GitHub
	// signs, as the make run banner's curl line sends it.
	integration := regexp.MustCompile(`(?m)^webhook_integration=(\S+)$`).FindSubmatch(out)[1]
	secret := regexp.MustCompile(`(?m)^webhook_secret=(\S+)$`).FindSubmatch(out)[1]
	event := []byte(`{"id":"shop-1001","total":"42.00"}`)
	mac := hmac.New(sha256.New, secret)
	mac.Write(event)
	for _, want := range []int{http.StatusCreated, http.StatusOK} {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/webhook/"+string(integration), bytes.NewReader(event))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, "the event, then its duplicate")
	}
}
