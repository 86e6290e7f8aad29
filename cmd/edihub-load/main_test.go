package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunRejectsUnknownCommands(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	require.ErrorContains(t, run(context.Background(), nil, &out, &errs), "usage")
	require.ErrorContains(t, run(context.Background(), []string{"fly"}, &out, &errs), `unknown command "fly"`)
	require.ErrorContains(t, run(context.Background(), []string{"run", "-mix", "odd"}, &out, &errs), "unknown mix")
}

func TestPayloadIsTheJSONPgbenchInserts(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"payload", "-size", "4096"}, &out, &errs))
	require.True(t, json.Valid(out.Bytes()))
	require.GreaterOrEqual(t, out.Len(), 4096)
}

func TestReportReadsTheStepsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rows := filepath.Join(dir, "rows.jsonl")
	pgbench := filepath.Join(dir, "pgbench.jsonl")
	require.NoError(t, os.WriteFile(rows, []byte(`{"mix":"new","clients":16,"rps":300}`+"\n"), 0o600))
	require.NoError(t, os.WriteFile(pgbench, []byte(`{"clients":16,"tps":600,"latency_avg_ms":1,"failed":0}`+"\n"), 0o600))
	var out, errs bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"report", "-rows", rows, "-pgbench", pgbench}, &out, &errs))
	require.Contains(t, out.String(), "| new | 16 | 300 |")
	require.Contains(t, out.String(), "| 600 | 0.50 |")
}
