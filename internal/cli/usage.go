package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/lefia/edihub/internal/config"
)

// command is one command line edihub understands, as its usage shows it.
type command struct {
	name     string // the words that select it, such as "tenant create"
	synopsis string // its arguments; the flags' meanings come from its flag set
	about    string
}

// commands is every command, in the order `edihub help` lists them.
var commands = []command{
	{"serve", "", "apply pending migrations, then serve HTTP on LISTEN_ADDR and run delivery workers"},
	{"worker", "", "apply pending migrations, then run delivery workers only"},
	{"migrate", "", "apply pending migrations and exit"},
	{"tenant create", "SLUG [--name NAME]", "create a tenant; prints its id"},
	{"tenant list", "", "a table of the tenants: slug, name, created"},
	{"env create", "--tenant SLUG NAME", "create an environment of a tenant; prints its id"},
	{"env list", "[--tenant SLUG]", "a table of the environments: tenant, environment"},
	{"apikey create", "--tenant SLUG --env NAME --name KEYNAME", "prints a new API key of the environment (shown once); the name says who sends with it"},
	{"apikey list", "", "one key a line: id, tenant, environment, prefix, state, created, revoked, last used, name"},
	{"apikey revoke", "ID", "the key stops working at once (within API_KEY_CACHE_TTL if a server misses the notice)"},
	{"apikey rotate", "ID [--grace 24h]", "prints a new key of the same environment; the old one works for the grace period"},
	{"message-type create", `--tenant SLUG CODE [--fields '["E1EDK01.BELNR"]'] [--window-hours N]`, "create a message type; prints its id"},
	{"message-type list", "[--tenant SLUG]", "a table of the message types: tenant, code, duplicate window, key paths"},
	{"integration create", "--tenant SLUG --env NAME --message-type CODE --scheme SCHEME [--secret S] [--tolerance 5m]", "create a webhook integration; prints its id and secret"},
	{"integration list", "", "one secret a line: integration id, tenant, environment, message type, scheme, " +
		"secret id, state, created, expires (\"-\" for an integration without secrets)"},
	{"integration rotate", "ID [--grace 24h] [--secret S]", "prints a new secret; the current ones work for the grace period"},
	{"integration revoke", "ID [--secret SECRET_ID]", "every secret of the integration (or the one) stops working at once"},
	{"user create", "--email EMAIL --role admin|viewer [--tenant SLUG]", "create a user (password from EDIHUB_PASSWORD or stdin); prints its id"},
	{"user list", "", "one user a line: id, email, role, tenant, state, created, disabled"},
	{"user disable", "ID", "the user is signed out at once and cannot sign in"},
	{"user enable", "ID", "a disabled user can sign in again"},
	{"user reset-password", "ID", "prints a new generated password; the user is signed out everywhere"},
	{"destination create", "--tenant SLUG --env NAME --url URL [--message-type CODE]... [--secret S] [--concurrency N]",
		"create a destination; prints its id and whsec_ secret"},
	{"destination list", "[--tenant SLUG]", "a table of the destinations: id, tenant, environment, URL, message types, state, concurrency"},
	{"channel create", "[--tenant SLUG] (--email ADDR | --slack URL | --webhook URL [--secret S]) [--name NAME]",
		"prints the id (and a webhook's whsec_ secret); no --tenant: a global channel"},
	{"channel list", "[--tenant SLUG]", "a table of the alert channels: id, tenant (- for a global one), kind, name, target"},
	{"delivery list", "[--tenant SLUG] [--status pending|delivered|failed] [--destination ID] [--message-type CODE] [--limit N]",
		"a table of the newest deliveries, newest first"},
	{"delivery retry", "ID | --all-failed [--destination ID]", "queue failed deliveries again; prints how many"},
	{"demo", "[--destination URL] [--secrets FILE] [--reset-password]", "create a demo tenant, API key and admin login (and a destination at URL); " +
		"keeps the key and login saved in FILE while they work, and saves them there"},
}

const usageFooter = "Every command reads DATABASE_URL (default " + config.DefaultDatabaseURL + ")."

// usageOf is the usage of the command called name with its flags, or of
// every command whose name begins with name's words ("tenant"), or of
// every command when name is "".
func usageOf(name string, flags *flag.FlagSet) string {
	var b strings.Builder
	var matched []command
	for _, c := range commands {
		if name == "" || c.name == name || strings.HasPrefix(c.name, name+" ") {
			matched = append(matched, c)
		}
	}
	if len(matched) == 1 {
		c := matched[0]
		fmt.Fprintf(&b, "usage: edihub %s\n\n%s\n", strings.TrimSpace(c.name+" "+c.synopsis), c.about)
		if flags != nil {
			writeFlags(&b, flags)
		}
	} else {
		b.WriteString("usage: edihub <command> [arguments]\n\ncommands:\n")
		for _, c := range matched {
			fmt.Fprintf(&b, "  %s\n      %s\n", strings.TrimSpace(c.name+" "+c.synopsis), c.about)
		}
		b.WriteString("\n`edihub COMMAND --help` shows one command's flags; `edihub --version` the version.\n")
	}
	b.WriteString("\n" + usageFooter)
	return b.String()
}

// writeFlags lists a command's flags as they are typed, with two dashes.
func writeFlags(b *strings.Builder, flags *flag.FlagSet) {
	first := true
	flags.VisitAll(func(f *flag.Flag) {
		if first {
			b.WriteString("\nflags:\n")
			first = false
		}
		kind, meaning := flag.UnquoteUsage(f)
		fmt.Fprintf(b, "  --%s", f.Name)
		if kind != "" {
			fmt.Fprintf(b, " %s", kind)
		}
		fmt.Fprintf(b, "\n      %s", meaning)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			fmt.Fprintf(b, " (default %s)", f.DefValue)
		}
		b.WriteString("\n")
	})
}

// UsageError reports a command line that cannot be understood, with the
// usage of the command it misused.
type UsageError struct{ msg, usage string }

func (e *UsageError) Error() string { return e.msg + "\n\n" + e.usage }

// usageErrorf reports a mistake in the command called name (with the
// usage of the commands it begins, when it names none completely), or
// with no name one in the command's name itself.
func usageErrorf(name, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if name != "" {
		msg = name + ": " + msg
	}
	return &UsageError{msg: msg, usage: usageOf(name, nil)}
}

// flagErrorf reports a mistake in the command whose flags are fs.
func flagErrorf(fs *flag.FlagSet, format string, args ...any) error {
	return &UsageError{msg: fs.Name() + ": " + fmt.Sprintf(format, args...), usage: usageOf(fs.Name(), fs)}
}

// helpRequest is a command line that asks for a command's usage, which Run
// prints instead of running anything.
type helpRequest struct{ usage string }

func (h *helpRequest) Error() string { return h.usage }

// ExitCode is 2 for a command line that cannot be understood, 1 otherwise.
func ExitCode(err error) int {
	var u *UsageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// isHelp reports whether arg asks for help, as the flag package reads it.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}
