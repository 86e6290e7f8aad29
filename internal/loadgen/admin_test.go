package loadgen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The plan kept for a page is the slowest one its database logged; plans
// of other databases and other log lines are passed over.
func TestSlowestPlanPicksTheLongestEntryOfTheDatabase(t *testing.T) {
	logged := strings.Join([]string{
		`2026-12-01 03:00:00.001 UTC [10] postgres@edihub_bench_admin LOG:  duration: 1.5 ms  plan:`,
		"\tQuery Text: SELECT 1",
		"\tResult  (cost=0.00..0.01 rows=1 width=4)",
		`2026-12-01 03:00:00.002 UTC [11] postgres@other LOG:  duration: 900.0 ms  plan:`,
		"\tQuery Text: SELECT pg_sleep(1)",
		`2026-12-01 03:00:00.003 UTC [10] postgres@edihub_bench_admin LOG:  duration: 42.25 ms  plan:`,
		"\tQuery Text: -- name: MessageCount :one",
		"\tSELECT count(*)",
		"\tFROM messages",
		"\t",
		"\t  ->  Index Only Scan using messages_time on messages",
		`2026-12-01 03:00:00.004 UTC [10] postgres@edihub_bench_admin LOG:  statement: SELECT 2`,
	}, "\n")
	require.Equal(t, "duration: 42.25 ms\nQuery Text: -- name: MessageCount :one\n  ->  Index Only Scan using messages_time on messages",
		slowestPlan(logged, "@edihub_bench_admin "))
	require.Empty(t, slowestPlan("LOG:  statement: SELECT 1", "@edihub_bench_admin "))
}

func TestReadAdminPages(t *testing.T) {
	pages, err := ReadAdminPages(strings.NewReader("# comment\n\ndashboard   /admin\naudit /admin/audit?action=x\n"))
	require.NoError(t, err)
	require.Equal(t, []AdminPage{{"dashboard", "/admin"}, {"audit", "/admin/audit?action=x"}}, pages)
	_, err = ReadAdminPages(strings.NewReader("lonely\n"))
	require.Error(t, err)
}
