// Package config reads edihub's settings from environment variables. It keeps
// no globals: Load returns a value that the caller passes on.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lefia/edihub/internal/egress"
)

// DefaultDatabaseURL is used when DATABASE_URL is unset: the local PostgreSQL
// that `make run` prepares.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/edihub?sslmode=disable"

// Config is every setting the binary reads.
type Config struct {
	DatabaseURL string
	// AdminDatabaseURL is where the read-only admin pages read: a standby
	// by target_session_attrs=prefer-standby, or DatabaseURL (one pool).
	AdminDatabaseURL string
	ListenAddr       string
	// MetricsAddr is where /metrics is served; empty means not at all.
	MetricsAddr string
	// Profiling serves Go's runtime profiles (/debug/pprof/) on MetricsAddr
	// too: an operator's tool for finding where CPU and memory go, off by
	// default because a CPU profile costs the server while it runs.
	Profiling bool
	// TrustedProxies are the networks whose X-Forwarded-For header is
	// believed; a client anywhere else is known by its own address.
	TrustedProxies    []*net.IPNet
	IdempotencyKeyTTL time.Duration
	// InterchangeWindow is how long an X12 or EDIFACT interchange's control
	// number, per sender and receiver, marks a repeat of it as a duplicate.
	InterchangeWindow time.Duration
	// APIKeyCacheTTL is how long an API key's lookup (the key and its
	// tenant's message types) is reused before it is read again; 0 reads
	// it for every request. It bounds how long a change made outside this
	// process may take to apply if the change notifications fail.
	APIKeyCacheTTL time.Duration
	MaxBodyBytes   int64
	// MaxBodyBytesInProcess bounds the request bodies the API holds at once,
	// taken as their bytes arrive: a request whose next bytes would pass it
	// waits before reading them, within its time limit. Each byte held costs about
	// five in memory at the peak (parsed, hashed, encoded for PostgreSQL,
	// and the collector's headroom).
	MaxBodyBytesInProcess int64
	// MaxBatchMessages is the most messages one batch request may carry.
	MaxBatchMessages int
	// RequireSynchronousStandby (the default) makes intake answer 503
	// rather than acknowledge a message that no synchronous standby
	// confirmed while the primary has standbys to wait for, so that an
	// acknowledgment always means two machines. false lets a primary whose
	// standby is lost go on acknowledging on one machine.
	RequireSynchronousStandby bool
	// ShutdownTimeout bounds how long in-flight requests may take to finish
	// after SIGTERM before the server stops waiting for them.
	ShutdownTimeout time.Duration
	// RequestTimeout bounds the work of one API request, database included.
	RequestTimeout time.Duration
	// RequestBodyIdleTimeout bounds how long an API request's body may
	// send nothing before the request is refused (408).
	RequestBodyIdleTimeout time.Duration
	// AdminRequestTimeout bounds the work of one admin page or form post;
	// the impact replay of the message-type editor is the slowest of them.
	AdminRequestTimeout time.Duration
	LogFormat           string // "text" or "json"
	// LogLevel is the least level logged: info by default, which leaves
	// out the job queue library's information and the requests for the
	// pages' static files, both shown at debug.
	LogLevel slog.Level
	// SweepInterval is how often expired idempotency keys are deleted, and
	// SweepBatchSize how many one statement deletes.
	SweepInterval  time.Duration
	SweepBatchSize int32
	// CookieSecure marks the admin's session and CSRF cookies Secure, so
	// browsers send them over HTTPS only. edihub itself serves plain HTTP
	// (TLS ends at a proxy in front of it), so it cannot tell on its own.
	CookieSecure bool
	// GroupCommitOff gives every single message a transaction of its own;
	// otherwise single messages decided by fingerprint that arrive while a
	// transaction is in flight share the next one, in at most
	// GroupCommitLanes transactions at once (0: ingest's default).
	GroupCommitOff   bool
	GroupCommitLanes int
	// Delivery holds the settings of the delivery workers.
	Delivery Delivery
	// Retention is how long each kind of stored data is kept.
	Retention Retention
	// Notify holds how notifications reach their channels.
	Notify Notify
	// Alerts holds the thresholds of the alert rules.
	Alerts Alerts
}

// Alerts are when the alert rules (internal/alert) find something wrong,
// and how often they look and remind.
type Alerts struct {
	// EvalInterval is how often the rules are evaluated, by one replica
	// at a time.
	EvalInterval time.Duration
	// Renotify is how long an open, unacknowledged alert waits between
	// reminders.
	Renotify time.Duration
	// DestinationFailingFor is how long every attempt to a destination
	// must have failed for destination.failing.
	DestinationFailingFor time.Duration
	// DeliveryLag is how old a destination's oldest pending delivery must
	// be for delivery.lagging.
	DeliveryLag time.Duration
	// DuplicateSpikeMin is the count of a message type's duplicates blocked
	// in an hour that duplicates.spike needs to exceed, besides five times
	// the type's hourly average.
	DuplicateSpikeMin int64
	// RefusalsMin is how many refused ingest answers one API key or
	// integration must get in 15 minutes for intake.refusing.
	RefusalsMin int64
	// AutoPauseAfter is how long every attempt to a destination must have
	// failed before it is paused; 0 never pauses one.
	AutoPauseAfter time.Duration
	// InterchangeGapAfter is how long a control number a partner skipped
	// must stay missing to be listed on the partners page and open
	// interchange.gap: interchanges sent at once may arrive out of order.
	InterchangeGapAfter time.Duration
}

// Notify is how notifications of alerts reach their channels. Webhook and
// Slack channels obey the destinations' egress policy (Delivery.Egress).
type Notify struct {
	// SMTP is the mail server email channels send through (SMTP_URL);
	// without one, email notifications fail with a message that says so.
	SMTP SMTP
	// From is the sender of email notifications (SMTP_FROM).
	From string
	// PublicURL is where users reach edihub, such as
	// https://edihub.example.com, without a trailing slash: links in
	// notifications begin with it. Empty leaves them as paths.
	PublicURL string
	// Timeout bounds one attempt, from connecting to the answer.
	Timeout time.Duration
	// MaxAttempts is how many attempts a notification gets before it is
	// failed.
	MaxAttempts int
	// RetryBase is the wait after the first failed attempt; each further
	// failure doubles it, up to an hour, with jitter.
	RetryBase time.Duration
}

// SMTP is a mail server from SMTP_URL: smtp://[user:pass@]host[:port]
// upgrades to TLS with STARTTLS when the server offers it (port 587 unless
// given), smtps:// speaks TLS from the start (port 465 unless given).
type SMTP struct {
	Host, Port         string
	Username, Password string
	ImplicitTLS        bool
}

// Configured reports whether an SMTP server was given.
func (s SMTP) Configured() bool { return s.Host != "" }

// Retention is how long each kind of data is kept before it is removed;
// zero keeps it forever (RETENTION_…=off).
type Retention struct {
	// Messages is a floor raised per tenant to its longest duplicate
	// window, so expiry never lets a duplicate through; a message whose
	// deliveries are not finished is kept whatever its age.
	Messages time.Duration
	// AuditEvents bounds the audit trail. A blocked copy points at its
	// audit event, so BlockedCopies is never longer than AuditEvents.
	AuditEvents      time.Duration
	BlockedCopies    time.Duration
	DeliveryAttempts time.Duration
}

// Delivery is how messages are handed on to destinations.
type Delivery struct {
	// AllowedCIDRs opens address ranges that destinations may not use
	// otherwise (loopback, private, link-local); see package egress.
	Egress egress.Policy
	// Timeout bounds one HTTP attempt, from connecting to the answer.
	Timeout time.Duration
	// MaxAttempts is how many attempts a delivery gets before it is failed.
	MaxAttempts int
	// RetryBase is the wait after the first failed attempt; each further
	// failure doubles it, up to a cap, with jitter.
	RetryBase time.Duration
	// SyncInterval is how often a worker process looks for new, changed or
	// removed destinations to run queues for.
	SyncInterval time.Duration
}

// Load reads the configuration through getenv (os.Getenv in production, a
// map in tests) and reports every invalid value at once.
func Load(getenv func(string) string) (Config, error) {
	cfg := Config{
		DatabaseURL:      withDefault(getenv("DATABASE_URL"), DefaultDatabaseURL),
		AdminDatabaseURL: getenv("ADMIN_DATABASE_URL"),
		ListenAddr:       withDefault(getenv("LISTEN_ADDR"), ":8080"),
		MetricsAddr:      getenv("METRICS_ADDR"),
		LogFormat:        withDefault(getenv("LOG_FORMAT"), "text"),
	}
	cfg.AdminDatabaseURL = withDefault(cfg.AdminDatabaseURL, cfg.DatabaseURL)
	var errs []error
	cfg.IdempotencyKeyTTL = positiveDuration(getenv, "IDEMPOTENCY_KEY_TTL", 168*time.Hour, &errs)
	cfg.InterchangeWindow = positiveDuration(getenv, "INTERCHANGE_WINDOW", 720*time.Hour, &errs)
	cfg.APIKeyCacheTTL = duration(getenv, "API_KEY_CACHE_TTL", 5*time.Second, true, &errs)
	cfg.ShutdownTimeout = positiveDuration(getenv, "SHUTDOWN_TIMEOUT", 30*time.Second, &errs)
	cfg.RequestTimeout = positiveDuration(getenv, "REQUEST_TIMEOUT", 30*time.Second, &errs)
	cfg.AdminRequestTimeout = positiveDuration(getenv, "ADMIN_REQUEST_TIMEOUT", 60*time.Second, &errs)
	cfg.RequestBodyIdleTimeout = positiveDuration(getenv, "REQUEST_BODY_IDLE_TIMEOUT", 10*time.Second, &errs)
	cfg.TrustedProxies = networks(getenv, "TRUSTED_PROXIES", "127.0.0.1/32,::1/128", &errs)
	cfg.SweepInterval = positiveDuration(getenv, "SWEEP_INTERVAL", time.Minute, &errs)
	cfg.SweepBatchSize = int32(positiveInt(getenv, "SWEEP_BATCH_SIZE", 1000, 32, &errs))
	cfg.MaxBodyBytes = positiveInt(getenv, "MAX_BODY_BYTES", 10<<20, 64, &errs)
	cfg.MaxBodyBytesInProcess = positiveInt(getenv, "MAX_BODY_BYTES_IN_PROCESS", 2*cfg.MaxBodyBytes, 64, &errs)
	if cfg.MaxBodyBytes > 0 && cfg.MaxBodyBytesInProcess < cfg.MaxBodyBytes {
		errs = append(errs, fmt.Errorf("MAX_BODY_BYTES_IN_PROCESS (%d) is less than MAX_BODY_BYTES (%d): a body of the largest size could never be read",
			cfg.MaxBodyBytesInProcess, cfg.MaxBodyBytes))
	}
	cfg.MaxBatchMessages = int(positiveInt(getenv, "MAX_BATCH_MESSAGES", 1000, 32, &errs))
	cfg.CookieSecure = boolean(getenv, "COOKIE_SECURE", &errs)
	cfg.Profiling = boolean(getenv, "PROFILING", &errs)
	cfg.RequireSynchronousStandby = booleanOr(getenv, "REQUIRE_SYNCHRONOUS_STANDBY", true, &errs)
	if cfg.Profiling && cfg.MetricsAddr == "" {
		errs = append(errs, errors.New("PROFILING=true needs METRICS_ADDR: the profiles are served on that listener, never on the API's"))
	}
	cfg.GroupCommitOff, cfg.GroupCommitLanes = groupCommit(getenv, &errs)
	cfg.Delivery = delivery(getenv, &errs)
	cfg.Retention = retention(getenv, &errs)
	cfg.Alerts = alerts(getenv, &errs)
	cfg.Notify = notify(getenv, &errs)
	if cfg.LogFormat != "text" && cfg.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("LOG_FORMAT=%q: want text or json", cfg.LogFormat))
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(withDefault(getenv("LOG_LEVEL"), "info"))); err != nil {
		errs = append(errs, fmt.Errorf("LOG_LEVEL=%q: want debug, info, warn or error", getenv("LOG_LEVEL")))
	}
	return cfg, errors.Join(errs...)
}

func delivery(getenv func(string) string, errs *[]error) Delivery {
	d := Delivery{
		Timeout:      positiveDuration(getenv, "DELIVERY_TIMEOUT", 30*time.Second, errs),
		RetryBase:    positiveDuration(getenv, "DELIVERY_RETRY_BASE", 30*time.Second, errs),
		SyncInterval: positiveDuration(getenv, "DELIVERY_SYNC_INTERVAL", 5*time.Second, errs),
		MaxAttempts:  12,
	}
	if v := getenv("DELIVERY_MAX_ATTEMPTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			*errs = append(*errs, fmt.Errorf("DELIVERY_MAX_ATTEMPTS=%q: want a number from 1 to 100", v))
		} else {
			d.MaxAttempts = n
		}
	}
	policy, err := egress.ParsePolicy(getenv("DESTINATION_ALLOWED_CIDRS"))
	if err != nil {
		*errs = append(*errs, fmt.Errorf("DESTINATION_ALLOWED_CIDRS: %w", err))
	}
	d.Egress = policy
	return d
}

func alerts(getenv func(string) string, errs *[]error) Alerts {
	a := Alerts{
		EvalInterval:          positiveDuration(getenv, "ALERT_EVAL_INTERVAL", 30*time.Second, errs),
		Renotify:              positiveDuration(getenv, "ALERT_RENOTIFY", 4*time.Hour, errs),
		DestinationFailingFor: positiveDuration(getenv, "ALERT_DESTINATION_FAILING_FOR", 10*time.Minute, errs),
		DeliveryLag:           positiveDuration(getenv, "ALERT_DELIVERY_LAG", 15*time.Minute, errs),
		DuplicateSpikeMin:     positiveInt(getenv, "ALERT_DUPLICATE_SPIKE_MIN", 20, 63, errs),
		RefusalsMin:           positiveInt(getenv, "ALERT_REFUSALS_MIN", 20, 63, errs),
		AutoPauseAfter:        24 * time.Hour,
		InterchangeGapAfter:   positiveDuration(getenv, "INTERCHANGE_GAP_AFTER", time.Hour, errs),
	}
	switch v := getenv("DESTINATION_AUTO_PAUSE_AFTER"); v {
	case "":
	case "off":
		a.AutoPauseAfter = 0
	default:
		a.AutoPauseAfter = positiveDuration(getenv, "DESTINATION_AUTO_PAUSE_AFTER", a.AutoPauseAfter, errs)
	}
	return a
}

func notify(getenv func(string) string, errs *[]error) Notify {
	n := Notify{
		Timeout:     positiveDuration(getenv, "NOTIFY_TIMEOUT", 10*time.Second, errs),
		RetryBase:   positiveDuration(getenv, "NOTIFY_RETRY_BASE", 30*time.Second, errs),
		MaxAttempts: int(positiveInt(getenv, "NOTIFY_MAX_ATTEMPTS", 10, 32, errs)),
		From:        strings.TrimSpace(getenv("SMTP_FROM")),
	}
	if n.MaxAttempts > 100 {
		*errs = append(*errs, fmt.Errorf("NOTIFY_MAX_ATTEMPTS=%d: want a number from 1 to 100", n.MaxAttempts))
	}
	if v := getenv("SMTP_URL"); v != "" {
		smtp, err := parseSMTPURL(v)
		if err != nil {
			*errs = append(*errs, fmt.Errorf("SMTP_URL: %w", err))
		}
		n.SMTP = smtp
		if n.From == "" {
			*errs = append(*errs, errors.New("SMTP_URL needs SMTP_FROM, the address notifications are sent from"))
		}
	}
	if n.From != "" {
		if _, err := mail.ParseAddress(n.From); err != nil {
			*errs = append(*errs, fmt.Errorf("SMTP_FROM=%q: want an email address such as edihub@example.com: %w", n.From, err))
		}
	}
	if v := getenv("PUBLIC_URL"); v != "" {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			*errs = append(*errs, fmt.Errorf("PUBLIC_URL=%q: want the http:// or https:// address users reach edihub at, such as https://edihub.example.com", v))
		}
		n.PublicURL = strings.TrimRight(v, "/")
	}
	return n
}

// parseSMTPURL reads smtp://[user:pass@]host[:port] or smtps://….
func parseSMTPURL(raw string) (SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// The error would repeat the URL, password included.
		return SMTP{}, errors.New("want smtp://[user:pass@]host:port or smtps://…; the value cannot be parsed")
	}
	s := SMTP{Host: u.Hostname(), Port: u.Port()}
	switch u.Scheme {
	case "smtp":
		s.Port = withDefault(s.Port, "587")
	case "smtps":
		s.ImplicitTLS = true
		s.Port = withDefault(s.Port, "465")
	default:
		return SMTP{}, fmt.Errorf("the scheme must be smtp (STARTTLS when offered) or smtps (TLS), not %q", u.Scheme)
	}
	if s.Host == "" {
		return SMTP{}, errors.New("want smtp://[user:pass@]host:port; the host is missing")
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	return s, nil
}

// maxGroupCommitLanes bounds GROUP_COMMIT: more lanes than the pool has
// connections would only queue for them.
const maxGroupCommitLanes = 64

// groupCommit reads GROUP_COMMIT: on (the default lanes), off, or a number
// of lanes.
func groupCommit(getenv func(string) string, errs *[]error) (off bool, lanes int) {
	switch v := getenv("GROUP_COMMIT"); v {
	case "", "on":
		return false, 0
	case "off":
		return true, 0
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxGroupCommitLanes {
			*errs = append(*errs, fmt.Errorf("GROUP_COMMIT=%q: want on, off or a number of lanes from 1 to %d", v, maxGroupCommitLanes))
			return false, 0
		}
		return false, n
	}
}

func retention(getenv func(string) string, errs *[]error) Retention {
	const day = 24 * time.Hour
	r := Retention{
		Messages:         retentionPeriod(getenv, "RETENTION_MESSAGES", 90*day, errs),
		AuditEvents:      retentionPeriod(getenv, "RETENTION_AUDIT_EVENTS", 365*day, errs),
		BlockedCopies:    retentionPeriod(getenv, "RETENTION_BLOCKED_COPIES", 90*day, errs),
		DeliveryAttempts: retentionPeriod(getenv, "RETENTION_DELIVERY_ATTEMPTS", 30*day, errs),
	}
	if r.AuditEvents != 0 && (r.BlockedCopies == 0 || r.BlockedCopies > r.AuditEvents) {
		*errs = append(*errs, fmt.Errorf("RETENTION_BLOCKED_COPIES (%s) must not be longer than RETENTION_AUDIT_EVENTS (%s): a blocked copy is shown with its audit event",
			FormatRetention(r.BlockedCopies), FormatRetention(r.AuditEvents)))
	}
	return r
}

// retentionPeriod reads a retention setting: a number of days such as 90d,
// a Go duration such as 36h, or off to keep the data forever (returned as 0).
func retentionPeriod(getenv func(string) string, name string, def time.Duration, errs *[]error) time.Duration {
	v := getenv(name)
	switch v {
	case "":
		return def
	case "off":
		return 0
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err == nil && n > 0 && n <= 36500 {
			return time.Duration(n) * 24 * time.Hour
		}
	} else if d, err := time.ParseDuration(v); err == nil && d >= time.Hour {
		return d
	}
	*errs = append(*errs, fmt.Errorf("%s=%q: want a number of days such as 90d, a duration of at least 1h such as 36h, or off", name, v))
	return def
}

// FormatRetention shows a retention period the way it is configured: whole
// days as 90d, other periods as a Go duration, zero as off.
func FormatRetention(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == 0:
		return "off"
	case d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return d.String()
}

// positiveInt reads the variable name as a positive integer of at most
// bits bits, def when it is unset.
func positiveInt(getenv func(string) string, name string, def int64, bits int, errs *[]error) int64 {
	v := getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil || n <= 0 {
		*errs = append(*errs, fmt.Errorf("%s=%q: want a positive number", name, v))
	}
	return n
}

func withDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// boolean reads a true/false setting that is false when unset.
func boolean(getenv func(string) string, name string, errs *[]error) bool {
	return booleanOr(getenv, name, false, errs)
}

// booleanOr is a boolean setting that is def when unset.
func booleanOr(getenv func(string) string, name string, def bool, errs *[]error) bool {
	v := getenv(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("%s=%q: want true or false", name, v))
	}
	return b
}

func positiveDuration(getenv func(string) string, name string, def time.Duration, errs *[]error) time.Duration {
	return duration(getenv, name, def, false, errs)
}

// duration reads a Go duration, which must be positive, or may be 0 (then
// meaning none) when zeroAllowed.
func duration(getenv func(string) string, name string, def time.Duration, zeroAllowed bool, errs *[]error) time.Duration {
	v := getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	switch {
	case err == nil && (d > 0 || d == 0 && zeroAllowed):
		return d
	case zeroAllowed:
		*errs = append(*errs, fmt.Errorf("%s=%q: want a Go duration such as 5s, or 0 for none", name, v))
	default:
		*errs = append(*errs, fmt.Errorf("%s=%q: want a positive Go duration such as 168h or 30s", name, v))
	}
	return def
}

// networks reads a comma-separated list of CIDR ranges; "none" means an
// empty list.
func networks(getenv func(string) string, name, def string, errs *[]error) []*net.IPNet {
	v := withDefault(getenv(name), def)
	if v == "none" {
		return nil
	}
	var nets []*net.IPNet
	for _, part := range strings.Split(v, ",") {
		_, n, err := net.ParseCIDR(strings.TrimSpace(part))
		if err != nil {
			*errs = append(*errs, fmt.Errorf("%s: %q is not a CIDR range such as 10.0.0.0/8", name, part))
			continue
		}
		nets = append(nets, n)
	}
	return nets
}
