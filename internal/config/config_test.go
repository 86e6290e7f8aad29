package config

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(env(nil))
	require.NoError(t, err)
	require.Equal(t, DefaultDatabaseURL, cfg.DatabaseURL)
	require.Equal(t, ":8080", cfg.ListenAddr)
	require.Equal(t, 168*time.Hour, cfg.IdempotencyKeyTTL)
	require.Equal(t, 720*time.Hour, cfg.InterchangeWindow)
	require.Equal(t, 5*time.Second, cfg.APIKeyCacheTTL)
	require.Equal(t, int64(10<<20), cfg.MaxBodyBytes)
	require.Equal(t, int64(20<<20), cfg.MaxBodyBytesInProcess, "two bodies of the largest size")
	require.Equal(t, "text", cfg.LogFormat)
	require.Equal(t, slog.LevelInfo, cfg.LogLevel)
	require.Equal(t, time.Minute, cfg.SweepInterval)
	require.Len(t, cfg.TrustedProxies, 2, "loopback proxies only")
	require.Equal(t, int32(1000), cfg.SweepBatchSize)
	require.Equal(t, 10*time.Second, cfg.RequestBodyIdleTimeout)
}

func TestLoadValues(t *testing.T) {
	t.Parallel()
	cfg, err := Load(env(map[string]string{
		"DATABASE_URL":              "postgres://x@db/edihub",
		"LISTEN_ADDR":               "127.0.0.1:9000",
		"IDEMPOTENCY_KEY_TTL":       "24h",
		"INTERCHANGE_WINDOW":        "48h",
		"MAX_BODY_BYTES":            "1024",
		"LOG_FORMAT":                "json",
		"LOG_LEVEL":                 "debug",
		"COOKIE_SECURE":             "true",
		"METRICS_ADDR":              "127.0.0.1:9090",
		"PROFILING":                 "true",
		"API_KEY_CACHE_TTL":         "0",
		"REQUEST_BODY_IDLE_TIMEOUT": "2s",
	}))
	require.NoError(t, err)
	require.Zero(t, cfg.APIKeyCacheTTL, "0 turns the cache off")
	require.True(t, cfg.Profiling)
	require.Equal(t, "postgres://x@db/edihub", cfg.DatabaseURL)
	require.Equal(t, "127.0.0.1:9000", cfg.ListenAddr)
	require.Equal(t, 24*time.Hour, cfg.IdempotencyKeyTTL)
	require.Equal(t, 48*time.Hour, cfg.InterchangeWindow)
	require.Equal(t, int64(1024), cfg.MaxBodyBytes)
	require.Equal(t, int64(2048), cfg.MaxBodyBytesInProcess)
	require.Equal(t, slog.LevelDebug, cfg.LogLevel)
	require.True(t, cfg.CookieSecure)
	require.Equal(t, 2*time.Second, cfg.RequestBodyIdleTimeout)
}

func TestBodiesInProcessHoldTheLargestBody(t *testing.T) {
	t.Parallel()
	cfg, err := Load(env(map[string]string{"MAX_BODY_BYTES": "1000", "MAX_BODY_BYTES_IN_PROCESS": "1000"}))
	require.NoError(t, err)
	require.Equal(t, int64(1000), cfg.MaxBodyBytesInProcess)
	_, err = Load(env(map[string]string{"MAX_BODY_BYTES": "1000", "MAX_BODY_BYTES_IN_PROCESS": "999"}))
	require.ErrorContains(t, err, "MAX_BODY_BYTES_IN_PROCESS (999) is less than MAX_BODY_BYTES (1000)")
}

func TestLoadRejectsEveryBadValue(t *testing.T) {
	t.Parallel()
	_, err := Load(env(map[string]string{
		"IDEMPOTENCY_KEY_TTL":       "a week",
		"MAX_BODY_BYTES":            "-1",
		"LOG_FORMAT":                "xml",
		"LOG_LEVEL":                 "chatty",
		"REQUEST_TIMEOUT":           "0s",
		"SWEEP_BATCH_SIZE":          "many",
		"TRUSTED_PROXIES":           "10.0.0.0/8,proxy.internal",
		"COOKIE_SECURE":             "yes please",
		"API_KEY_CACHE_TTL":         "-1s",
		"REQUEST_BODY_IDLE_TIMEOUT": "0s",
	}))
	require.Error(t, err)
	for _, name := range []string{"REQUEST_BODY_IDLE_TIMEOUT", "API_KEY_CACHE_TTL", "IDEMPOTENCY_KEY_TTL", "MAX_BODY_BYTES", "LOG_FORMAT", "LOG_LEVEL", "REQUEST_TIMEOUT", "SWEEP_BATCH_SIZE", "COOKIE_SECURE"} {
		require.ErrorContains(t, err, name)
	}
}

func TestProfilingNeedsTheMetricsListener(t *testing.T) {
	t.Parallel()
	_, err := Load(env(map[string]string{"PROFILING": "true"}))
	require.ErrorContains(t, err, "PROFILING=true needs METRICS_ADDR")
	_, err = Load(env(map[string]string{"PROFILING": "on", "METRICS_ADDR": "127.0.0.1:9090"}))
	require.ErrorContains(t, err, `PROFILING="on": want true or false`)
}

func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	cfg, err := Load(env(map[string]string{"TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.0/24"}))
	require.NoError(t, err)
	require.Len(t, cfg.TrustedProxies, 2)
	require.Equal(t, "10.0.0.0/8", cfg.TrustedProxies[0].String())

	cfg, err = Load(env(map[string]string{"TRUSTED_PROXIES": "none"}))
	require.NoError(t, err)
	require.Empty(t, cfg.TrustedProxies)
}

func TestRetention(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	cfg, err := Load(env(nil))
	require.NoError(t, err)
	require.Equal(t, Retention{Messages: 90 * day, AuditEvents: 365 * day, BlockedCopies: 90 * day, DeliveryAttempts: 30 * day}, cfg.Retention)

	cfg, err = Load(env(map[string]string{
		"RETENTION_MESSAGES":          "36h",
		"RETENTION_AUDIT_EVENTS":      "off",
		"RETENTION_BLOCKED_COPIES":    "off",
		"RETENTION_DELIVERY_ATTEMPTS": "7d",
	}))
	require.NoError(t, err)
	require.Equal(t, Retention{Messages: 36 * time.Hour, DeliveryAttempts: 7 * day}, cfg.Retention)
	require.Equal(t, "36h0m0s", FormatRetention(cfg.Retention.Messages))
	require.Equal(t, "7d", FormatRetention(cfg.Retention.DeliveryAttempts))
	require.Equal(t, "off", FormatRetention(cfg.Retention.AuditEvents))

	for name, value := range map[string]string{
		"RETENTION_MESSAGES":          "0d",
		"RETENTION_AUDIT_EVENTS":      "forever",
		"RETENTION_BLOCKED_COPIES":    "30m",
		"RETENTION_DELIVERY_ATTEMPTS": "-3d",
	} {
		_, err := Load(env(map[string]string{name: value}))
		require.ErrorContains(t, err, name+"=", "%s=%s", name, value)
	}

	_, err = Load(env(map[string]string{"RETENTION_AUDIT_EVENTS": "30d", "RETENTION_BLOCKED_COPIES": "60d"}))
	require.ErrorContains(t, err, "RETENTION_BLOCKED_COPIES (60d) must not be longer than RETENTION_AUDIT_EVENTS (30d)")
	_, err = Load(env(map[string]string{"RETENTION_AUDIT_EVENTS": "30d", "RETENTION_BLOCKED_COPIES": "off"}))
	require.ErrorContains(t, err, "RETENTION_BLOCKED_COPIES (off)")
}

func TestGroupCommit(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]struct {
		off   bool
		lanes int
	}{"": {}, "on": {}, "off": {off: true}, "3": {lanes: 3}, "64": {lanes: 64}} {
		cfg, err := Load(env(map[string]string{"GROUP_COMMIT": v}))
		require.NoError(t, err, v)
		require.Equal(t, want.off, cfg.GroupCommitOff, v)
		require.Equal(t, want.lanes, cfg.GroupCommitLanes, v)
	}
	for _, v := range []string{"0", "65", "true", "-1"} {
		_, err := Load(env(map[string]string{"GROUP_COMMIT": v}))
		require.ErrorContains(t, err, fmt.Sprintf("GROUP_COMMIT=%q: want on, off or a number of lanes from 1 to 64", v))
	}
}

func TestAlerts(t *testing.T) {
	t.Parallel()
	cfg, err := Load(env(nil))
	require.NoError(t, err)
	require.Equal(t, Alerts{
		EvalInterval: 30 * time.Second, Renotify: 4 * time.Hour, DestinationFailingFor: 10 * time.Minute,
		DeliveryLag: 15 * time.Minute, DuplicateSpikeMin: 20, RefusalsMin: 20, AutoPauseAfter: 24 * time.Hour,
		InterchangeGapAfter: time.Hour,
	}, cfg.Alerts)

	cfg, err = Load(env(map[string]string{
		"ALERT_EVAL_INTERVAL": "5s", "ALERT_RENOTIFY": "1h", "ALERT_DESTINATION_FAILING_FOR": "2m",
		"ALERT_DELIVERY_LAG": "1h", "ALERT_DUPLICATE_SPIKE_MIN": "100", "ALERT_REFUSALS_MIN": "3",
		"DESTINATION_AUTO_PAUSE_AFTER": "off", "INTERCHANGE_GAP_AFTER": "10m",
	}))
	require.NoError(t, err)
	require.Equal(t, Alerts{
		EvalInterval: 5 * time.Second, Renotify: time.Hour, DestinationFailingFor: 2 * time.Minute,
		DeliveryLag: time.Hour, DuplicateSpikeMin: 100, RefusalsMin: 3, InterchangeGapAfter: 10 * time.Minute,
	}, cfg.Alerts, "off never pauses a destination")

	_, err = Load(env(map[string]string{
		"ALERT_EVAL_INTERVAL": "0s", "ALERT_RENOTIFY": "often", "ALERT_REFUSALS_MIN": "0",
		"DESTINATION_AUTO_PAUSE_AFTER": "never", "INTERCHANGE_GAP_AFTER": "0s",
	}))
	for _, name := range []string{"ALERT_EVAL_INTERVAL", "ALERT_RENOTIFY", "ALERT_REFUSALS_MIN", "DESTINATION_AUTO_PAUSE_AFTER",
		"INTERCHANGE_GAP_AFTER"} {
		require.ErrorContains(t, err, name)
	}
}

func TestLoadNotify(t *testing.T) {
	t.Parallel()
	cfg, err := Load(env(nil))
	require.NoError(t, err)
	require.False(t, cfg.Notify.SMTP.Configured(), "no mail server unless SMTP_URL names one")
	require.Equal(t, 10, cfg.Notify.MaxAttempts)

	cfg, err = Load(env(map[string]string{
		"SMTP_URL": "smtp://alerts:s%40cret@mail.example.com", "SMTP_FROM": "edihub <edihub@example.com>",
		"PUBLIC_URL": "https://edihub.example.com/", "NOTIFY_MAX_ATTEMPTS": "3", "NOTIFY_RETRY_BASE": "1s",
	}))
	require.NoError(t, err)
	require.Equal(t, SMTP{Host: "mail.example.com", Port: "587", Username: "alerts", Password: "s@cret"}, cfg.Notify.SMTP)
	require.Equal(t, "https://edihub.example.com", cfg.Notify.PublicURL, "links append a path to it")
	require.Equal(t, 3, cfg.Notify.MaxAttempts)

	cfg, err = Load(env(map[string]string{"SMTP_URL": "smtps://mail.example.com", "SMTP_FROM": "edihub@example.com"}))
	require.NoError(t, err)
	require.Equal(t, SMTP{Host: "mail.example.com", Port: "465", ImplicitTLS: true}, cfg.Notify.SMTP)

	_, err = Load(env(map[string]string{
		"SMTP_URL": "http://user:hunter2@mail.example.com", "PUBLIC_URL": "edihub.example.com", "NOTIFY_MAX_ATTEMPTS": "101",
	}))
	require.ErrorContains(t, err, "SMTP_URL: the scheme must be smtp")
	require.ErrorContains(t, err, "SMTP_URL needs SMTP_FROM")
	require.ErrorContains(t, err, "PUBLIC_URL=")
	require.ErrorContains(t, err, "NOTIFY_MAX_ATTEMPTS=101")
	require.NotContains(t, err.Error(), "hunter2", "a password is never repeated")
}
