package cli_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/cli"
)

// Every command answers --help (and -h, and `edihub help COMMAND`) with its
// own usage and flags on stdout, touching no database.
func TestHelpOfEachCommand(t *testing.T) {
	t.Parallel()
	unreachable := "postgres://postgres@127.0.0.1:1/edihub?connect_timeout=1"
	for _, command := range []string{"serve", "worker", "migrate", "demo",
		"tenant create", "tenant list", "env create", "env list", "apikey create", "apikey list", "apikey revoke", "apikey rotate",
		"message-type create", "message-type list", "integration create", "integration list", "integration rotate",
		"integration revoke", "user create", "user list", "user disable", "user enable", "user reset-password",
		"destination create", "destination list", "channel create", "channel list", "delivery list", "delivery retry"} {
		words := strings.Fields(command)
		for _, args := range [][]string{append(words, "--help"), append(words, "-h"), append([]string{"help"}, words...)} {
			r := run(t, unreachable, nil, "", args...)
			require.NoError(t, r.err, "%v", args)
			require.True(t, strings.HasPrefix(r.stdout, "usage: edihub "+command), "%v prints its usage first:\n%s", args, r.stdout)
			require.NotContains(t, r.stdout, "commands:", "%v prints one command's usage, not the list", args)
		}
	}
	r := run(t, unreachable, nil, "", "destination", "create", "--help")
	require.Contains(t, r.stdout, "--concurrency int\n      deliveries to this destination that run at once, across every worker process (default 8)")

	r = run(t, unreachable, nil, "", "user", "--help")
	require.NoError(t, r.err)
	for _, verb := range []string{"create", "list", "disable", "enable", "reset-password"} {
		require.Contains(t, r.stdout, "\n  user "+verb)
	}
	require.NotContains(t, r.stdout, "tenant create", "a noun's help lists its own commands")
}

// A mistake in a command prints what is wrong and that command's usage,
// not the list of every command, and exits 2.
func TestMistakeShowsTheCommandsUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args  []string
		usage string
		part  string
	}{
		{[]string{"tenant", "create"}, "usage: edihub tenant create SLUG", "tenant create: want 1 argument(s) (SLUG), got 0"},
		{[]string{"env", "list", "--bogus"}, "usage: edihub env list [--tenant SLUG]", "env list: flag provided but not defined: -bogus"},
		{[]string{"apikey", "create", "--tenant", "acme"}, "usage: edihub apikey create --tenant SLUG --env NAME --name KEYNAME", "--env is required"},
		{[]string{"delivery", "retry"}, "usage: edihub delivery retry", "give one delivery id"},
		{[]string{"serve", "now"}, "usage: edihub serve", `serve: takes no arguments (it is configured through environment variables), got "now"`},
		{[]string{"tenant", "delete"}, "  tenant list", `tenant: unknown subcommand "delete"`},
	} {
		r := run(t, "", nil, "", c.args...)
		requireUsageError(t, r, c.part)
		require.Contains(t, r.err.Error(), c.usage, "%v", c.args)
		require.NotContains(t, r.err.Error(), "apikey rotate", "%v shows its own usage only", c.args)
	}
	r := run(t, "", nil, "", "frobnicate")
	requireUsageError(t, r, `unknown command "frobnicate"`)
	require.Contains(t, r.err.Error(), "apikey rotate", "an unknown command lists every command")
}

// --version says the version set at build time, else the build info's.
func TestVersion(t *testing.T) {
	r := run(t, "", nil, "", "--version")
	require.NoError(t, r.err)
	require.Equal(t, "edihub devel ("+runtime.Version()+")\n", r.stdout, "a test binary has no module version and no commit")

	cli.Version = "1.4.0"
	t.Cleanup(func() { cli.Version = "" })
	require.Equal(t, "edihub 1.4.0 ("+runtime.Version()+")\n", run(t, "", nil, "", "version").stdout)
}
