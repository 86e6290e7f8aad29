package metrics

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// poolCollector reads the connection pool's statistics at scrape time, so
// the numbers are current and cost nothing between scrapes.
type poolCollector struct {
	pool *pgxpool.Pool

	acquired, idle, total, max    *prometheus.Desc
	acquires, emptyAcquires       *prometheus.Desc
	canceledAcquires, acquireTime *prometheus.Desc
	emptyAcquireWait              *prometheus.Desc
}

func newPoolCollector(pool *pgxpool.Pool) *poolCollector {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("edihub_db_pool_"+name, help, nil, nil)
	}
	return &poolCollector{
		pool:             pool,
		acquired:         desc("acquired_connections", "Connections in use by a request."),
		idle:             desc("idle_connections", "Open connections waiting for a request."),
		total:            desc("connections", "Open connections."),
		max:              desc("max_connections", "The pool's size limit (pool_max_conns)."),
		acquires:         desc("acquires_total", "Connections handed to requests."),
		emptyAcquires:    desc("empty_acquires_total", "Acquires that had to wait because no connection was idle."),
		canceledAcquires: desc("canceled_acquires_total", "Acquires given up because the request ended first."),
		acquireTime:      desc("acquire_seconds_total", "Time spent acquiring connections."),
		emptyAcquireWait: desc("empty_acquire_wait_seconds_total", "Time spent waiting for a connection when none was idle."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.total, c.max, c.acquires,
		c.emptyAcquires, c.canceledAcquires, c.acquireTime, c.emptyAcquireWait} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.acquired, float64(s.AcquiredConns()))
	gauge(c.idle, float64(s.IdleConns()))
	gauge(c.total, float64(s.TotalConns()))
	gauge(c.max, float64(s.MaxConns()))
	counter(c.acquires, float64(s.AcquireCount()))
	counter(c.emptyAcquires, float64(s.EmptyAcquireCount()))
	counter(c.canceledAcquires, float64(s.CanceledAcquireCount()))
	counter(c.acquireTime, s.AcquireDuration().Seconds())
	counter(c.emptyAcquireWait, s.EmptyAcquireWaitTime().Seconds())
}
