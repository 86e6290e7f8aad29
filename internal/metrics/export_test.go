package metrics

import (
	"reflect"
	"regexp"

	"github.com/prometheus/client_golang/prometheus"
)

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// Names are the names of every metric m exports, read from the collectors'
// descriptions, so that metrics without a value yet are named too.
func Names(m *Metrics) []string {
	collectors := []prometheus.Collector{newPoolCollector(nil), newDeliveryQueueCollector(nil)}
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if c, ok := v.Field(i).Interface().(prometheus.Collector); ok {
			collectors = append(collectors, c)
		}
	}
	ch := make(chan *prometheus.Desc, 100)
	go func() {
		for _, c := range collectors {
			c.Describe(ch)
		}
		close(ch)
	}()
	var names []string
	for d := range ch {
		if match := fqName.FindStringSubmatch(d.String()); match != nil {
			names = append(names, match[1])
		}
	}
	return names
}
