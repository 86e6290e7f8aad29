// Package metrics defines edihub's Prometheus metrics: ingest outcomes, HTTP
// latency, database pool use and retention progress. They are served on a
// listener of their own (METRICS_ADDR), apart from the public API.
package metrics

import (
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/lefia/edihub/internal/replication"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Outcomes of an ingest request, the values of the outcome label.
const (
	OutcomeAccepted             = "accepted"
	OutcomeDuplicateKey         = "duplicate_key"
	OutcomeDuplicateFingerprint = "duplicate_fingerprint"
	// A message of an X12 or EDIFACT interchange received before.
	OutcomeDuplicateInterchange = "duplicate_interchange"
	OutcomeRejected             = "rejected"
	// A request stopped by REQUEST_TIMEOUT, and one whose client left
	// before the answer: neither was decided, and neither is a rejection.
	OutcomeTimedOut     = "timed_out"
	OutcomeClientClosed = "client_closed"
	// A packet or batch whose messages had different outcomes; the
	// messages' own are counted in IngestMessages.
	OutcomeMixed = "mixed"
)

// UnknownMessageType is the message_type label of every request naming a
// code its tenant does not have: labels take configured codes only, so the
// number of series stays bounded by the configuration, not by clients.
const UnknownMessageType = "unknown"

// MixedMessageTypes is the message_type label of a request whose messages
// (the items of a batch) are of several types; each message is counted
// under its own in IngestMessages.
const MixedMessageTypes = "mixed"

// Metrics holds every collector, registered on a registry of its own so
// that tests can create as many as they like.
type Metrics struct {
	registry *prometheus.Registry

	// Ingest counts ingest requests by where they went and what happened;
	// reason is the problem type of a rejected request, empty otherwise.
	Ingest *prometheus.CounterVec
	// IngestMessages counts the messages that ingest requests carried, by
	// what became of each: a packet of IDocs or a batch counts every one.
	IngestMessages *prometheus.CounterVec
	// RequestDuration is the latency of every HTTP request by route.
	RequestDuration *prometheus.HistogramVec
	// RowsSwept counts rows deleted after their retention, by kind.
	RowsSwept *prometheus.CounterVec
	// SweepFailures counts sweeps that failed and will be retried, by kind.
	SweepFailures *prometheus.CounterVec
	// AuditPartitions counts audit_events' monthly partitions created
	// ahead and dropped after RETENTION_AUDIT_EVENTS; a round of that
	// maintenance that failed counts in SweepFailures as audit_events.
	AuditPartitions *prometheus.CounterVec
	// Deliveries counts delivery attempts by outcome (delivered, retry,
	// failed), and DeliveryDuration times them.
	Deliveries       *prometheus.CounterVec
	DeliveryDuration prometheus.Histogram
	// BodyBytesInProcess is the share of the API request bodies being read
	// or worked on, taken as their bytes arrive, and BodiesWaiting the requests waiting for
	// room under MAX_BODY_BYTES_IN_PROCESS: a queue that stays long means
	// large posts arrive faster than the server can store them.
	BodyBytesInProcess prometheus.Gauge
	BodiesWaiting      prometheus.Gauge
	// IngestGroupSize is how many single messages each group commit
	// decided in one transaction, and IngestGroupFallbacks counts the
	// groups whose transaction failed, so that each member was decided
	// again alone: groups of one mean little concurrency, and fallbacks
	// that keep coming mean a member that fails every time it is tried.
	IngestGroupSize      prometheus.Histogram
	IngestGroupFallbacks prometheus.Counter
	// IngestRefusals counts the ingest answers of 400, 401, 403, 413, 415
	// and 422 to authenticated API keys and known integrations: what the
	// alert rule intake.refusing counts per key and integration, here per
	// tenant, environment and endpoint.
	IngestRefusals *prometheus.CounterVec
	// RollupFailures counts rounds of the traffic rollup that failed.
	RollupFailures prometheus.Counter
	// AlertRuleFailures counts alert rules whose evaluation failed in a
	// round, by rule; the other rules were evaluated all the same.
	AlertRuleFailures *prometheus.CounterVec
	// SynchronousStandbys and SynchronousConfigured are what the primary
	// last said of its standbys (package replication).
	SynchronousStandbys   prometheus.Gauge
	SynchronousConfigured prometheus.Gauge
}

// ObserveReplication records what the primary says of its standbys.
func (m *Metrics) ObserveReplication(s replication.State) {
	m.SynchronousStandbys.Set(float64(s.Synchronous))
	configured := 0.0
	if s.Configured {
		configured = 1
	}
	m.SynchronousConfigured.Set(configured)
}

// New creates the metrics and registers the pool's statistics, the Go
// runtime and the process collectors beside them.
func New(pool *pgxpool.Pool) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		Ingest: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_ingest_requests_total",
			Help: "Ingest requests by endpoint, tenant, environment, message type, outcome and rejection reason.",
		}, []string{"endpoint", "tenant_id", "environment_id", "message_type", "outcome", "reason"}),
		IngestMessages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_ingest_messages_total",
			Help: "Messages received (one per IDoc of a packet, one per item of a batch) by endpoint, tenant, environment, message type and outcome.",
		}, []string{"endpoint", "tenant_id", "environment_id", "message_type", "outcome"}),
		RequestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "edihub_http_request_duration_seconds",
			Help:    "HTTP request latency by route, method and status code.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method", "status"}),
		RowsSwept: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_retention_rows_deleted_total",
			Help: "Rows deleted by retention, by kind: idempotency_keys, messages, blocked_copies, delivery_attempts.",
		}, []string{"kind"}),
		SweepFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_retention_sweep_failures_total",
			Help: "Retention sweeps that failed, by kind; the next one retries.",
		}, []string{"kind"}),
		AuditPartitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_audit_partitions_total",
			Help: "audit_events partitions (a month each) created ahead of time or dropped after RETENTION_AUDIT_EVENTS, by change.",
		}, []string{"change"}),
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_delivery_attempts_total",
			Help: "Delivery attempts by outcome: delivered, retry (will be tried again) or failed (no attempts left).",
		}, []string{"outcome"}),
		DeliveryDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "edihub_delivery_attempt_duration_seconds",
			Help:    "Time from sending a delivery to its answer, a timeout or a connection error.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		BodyBytesInProcess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_request_body_bytes_in_process",
			Help: "Bytes taken by the API request bodies being read or worked on, as they arrived, IDoc-XML bodies counted three times (at most MAX_BODY_BYTES_IN_PROCESS).",
		}),
		BodiesWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_request_bodies_waiting",
			Help: "API requests waiting, unread, for room under MAX_BODY_BYTES_IN_PROCESS.",
		}),
		IngestGroupSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "edihub_ingest_group_size",
			Help:    "Single messages decided together in one group commit transaction.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 100},
		}),
		IngestGroupFallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_ingest_group_fallbacks_total",
			Help: "Group commit transactions that failed, after which each of their messages was decided alone.",
		}),
		IngestRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_ingest_refusals_total",
			Help: "Ingest answers of 400, 401, 403, 413, 415 or 422 to authenticated API keys and known integrations, by endpoint, tenant and environment.",
		}, []string{"endpoint", "tenant_id", "environment_id"}),
		RollupFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_traffic_rollup_failures_total",
			Help: "Rounds of the dashboard's traffic rollup that failed; the next one retries.",
		}),
		SynchronousStandbys: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_database_synchronous_standbys",
			Help: "Standbys that confirm the primary's commits now; 0 while synchronous replication is configured means acknowledged messages are on one machine.",
		}),
		SynchronousConfigured: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_database_synchronous_replication_configured",
			Help: "1 when the primary has standbys to wait for (synchronous_standby_names is set, or a standby keeps a physical replication slot), 0 for a single server.",
		}),
		AlertRuleFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_alert_rule_failures_total",
			Help: "Alert rules whose evaluation failed in a round, by rule; the others were evaluated.",
		}, []string{"rule"}),
	}
	m.registry.MustRegister(m.IngestRefusals, m.RollupFailures, m.AlertRuleFailures, m.SynchronousStandbys, m.SynchronousConfigured,
		m.Ingest, m.IngestMessages, m.RequestDuration, m.RowsSwept, m.SweepFailures, m.AuditPartitions,
		m.Deliveries, m.DeliveryDuration, m.BodyBytesInProcess, m.BodiesWaiting, m.IngestGroupSize, m.IngestGroupFallbacks, newPoolCollector(pool), newDeliveryQueueCollector(pool),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// ObserveGroup counts one group commit of size messages, and whether its
// transaction failed.
func (m *Metrics) ObserveGroup(size int, failed bool) {
	m.IngestGroupSize.Observe(float64(size))
	if failed {
		m.IngestGroupFallbacks.Inc()
	}
}

// ObserveDelivery counts one delivery attempt.
func (m *Metrics) ObserveDelivery(outcome string, duration time.Duration) {
	m.Deliveries.WithLabelValues(outcome).Inc()
	m.DeliveryDuration.Observe(duration.Seconds())
}

// ObserveSweep counts one retention sweep of a kind of data: the rows it
// deleted and whether it failed.
func (m *Metrics) ObserveSweep(kind string, deleted int64, err error) {
	m.RowsSwept.WithLabelValues(kind).Add(float64(deleted))
	if err != nil {
		m.SweepFailures.WithLabelValues(kind).Inc()
	}
}

// ObserveAuditPartitions counts one round of audit_events partition
// maintenance: the partitions it created and dropped, and whether it failed.
func (m *Metrics) ObserveAuditPartitions(created, dropped int, err error) {
	m.AuditPartitions.WithLabelValues("created").Add(float64(created))
	m.AuditPartitions.WithLabelValues("dropped").Add(float64(dropped))
	if err != nil {
		m.SweepFailures.WithLabelValues("audit_events").Inc()
	}
}

// ObserveRollup counts a failed round of the traffic rollup.
func (m *Metrics) ObserveRollup(err error) {
	if err != nil {
		m.RollupFailures.Inc()
	}
}

// ObserveAlertRule counts a failed evaluation of an alert rule.
func (m *Metrics) ObserveAlertRule(rule string, err error) {
	if err != nil {
		m.AlertRuleFailures.WithLabelValues(rule).Inc()
	}
}
