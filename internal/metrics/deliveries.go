package metrics

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lefia/edihub/internal/db"
)

// deliveryQueueCollector reads, at scrape time, how many deliveries wait
// and how long the oldest has waited, from the deliveries table, which
// every worker process shares: each process reports the whole queue.
type deliveryQueueCollector struct {
	pool          *pgxpool.Pool
	pending, age  *prometheus.Desc
	scrapeTimeout time.Duration
}

func newDeliveryQueueCollector(pool *pgxpool.Pool) *deliveryQueueCollector {
	return &deliveryQueueCollector{
		pool:          pool,
		pending:       prometheus.NewDesc("edihub_deliveries_pending", "Deliveries not yet made (waiting, running or waiting for a retry).", nil, nil),
		age:           prometheus.NewDesc("edihub_delivery_oldest_pending_seconds", "Age of the oldest delivery not yet made; 0 when none waits.", nil, nil),
		scrapeTimeout: 5 * time.Second,
	}
}

func (c *deliveryQueueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.age
}

// Collect reports nothing when the database cannot answer, rather than
// numbers that look real.
func (c *deliveryQueueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.scrapeTimeout)
	defer cancel()
	stats, err := db.On(c.pool).DeliveryPendingStats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.pending, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(stats.Pending))
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, stats.OldestSeconds)
}
