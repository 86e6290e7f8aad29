package metrics_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/metrics"
)

// deployDir holds the Prometheus rules and the Grafana dashboard edihub
// ships for its metrics.
const deployDir = "../../deploy"

// The alerting rules are valid and do what their tests say: promtool
// checks them and runs deploy/prometheus/alerts_test.yml. Without promtool
// (Debian's package prometheus; scripts/prerequisites.sh promtool) the test
// fails rather than skips, so that a machine missing it cannot pass
// unnoticed.
func TestPrometheusRules(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	require.NoError(t, err, "the alerting rules are checked with promtool: scripts/prerequisites.sh promtool installs it")
	dir := filepath.Join(deployDir, "prometheus")
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// Every edihub metric the rules and the dashboard read is one edihub
// exports, so that a renamed metric cannot leave an alert that never fires.
func TestRulesAndDashboardReadExportedMetrics(t *testing.T) {
	t.Parallel()
	exported := metrics.Names(metrics.New(nil))
	name := regexp.MustCompile(`edihub_[a-z_]+`)
	for _, file := range []string{"prometheus/alerts.yml", "grafana/edihub.json"} {
		raw, err := os.ReadFile(filepath.Join(deployDir, file))
		require.NoError(t, err)
		if filepath.Ext(file) == ".json" {
			require.True(t, json.Valid(raw), "%s is not JSON", file)
		}
		used := name.FindAllString(string(raw), -1)
		require.NotEmpty(t, used, file)
		for _, n := range used {
			base := n
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				base = strings.TrimSuffix(base, suffix)
			}
			require.True(t, slices.Contains(exported, n) || slices.Contains(exported, base), "%s reads %s, which edihub does not export", file, n)
		}
	}
}
