package web

import (
	"fmt"
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auditlog"
	"github.com/lefia/edihub/internal/dashboard"
	"github.com/lefia/edihub/internal/messagesearch"
)

// filterTime writes a time as the audit filter's from and to take it, to
// the second, so that a link covers what a count covered.
const filterTime = "2006-01-02T15:04:05"

// weekBlockedURL is the audit log of the 7 days' blocked duplicates that
// the dashboard counts, of one message type when code is not "".
func weekBlockedURL(d dashboard.Dashboard, tenant, code string) templ.SafeURL {
	f := auditlog.Filter{
		Action: auditevent.DuplicateBlocked,
		Names:  adminlist.Names{Tenant: tenant, MessageType: code},
		Window: adminlist.Window{From: d.WeekStart.UTC().Format(filterTime)},
	}
	return templ.URL(f.URL())
}

// weekMessagesURL is the messages page of the 7 days' messages that the
// dashboard counts.
func weekMessagesURL(d dashboard.Dashboard) templ.SafeURL {
	f := messagesearch.Filter{Names: adminlist.Names{Tenant: d.Tenant}, Window: adminlist.Window{From: d.WeekStart.UTC().Format(time.DateTime)}}
	return templ.URL(f.URL())
}

// dashboardShowsTenants reports whether the dashboard covers more than one
// tenant, so that message types are named with their tenant.
func dashboardShowsTenants(p Page, d dashboard.Dashboard) bool {
	return p.User.TenantSlug == "" && d.Tenant == ""
}

// typeLabel names a message type, with its tenant when several are shown.
func typeLabel(t dashboard.Type, withTenant bool) string {
	if withTenant {
		return t.Tenant + " / " + t.Code
	}
	return t.Code
}

func count(n int64) string { return strconv.FormatInt(n, 10) }

func percent(ratio float64) string { return fmt.Sprintf("%.1f %%", 100*ratio) }

// seriesClass colours a chart series; edihub.css defines seriesColours
// classes, which repeat for further series (the legend and the data
// table tell them apart).
func seriesClass(i int) string { return "series-" + strconv.Itoa(i%seriesColours) }

const seriesColours = 8

// The chart's geometry, in the units of its viewBox; CSS scales it to the
// page's width.
const (
	chartWidth  = 720
	chartHeight = 240
	chartLeft   = 40 // room for the count axis
	chartRight  = 8
	chartTop    = 10
	chartBottom = 24 // room for the day labels
	plotWidth   = chartWidth - chartLeft - chartRight
	plotHeight  = chartHeight - chartTop - chartBottom
)

// chart is the stacked bar chart of blocked duplicates per day, laid out
// for the SVG template.
type chart struct {
	ViewBox     string
	Left, Right string // the ends of the axes
	Base        string // the zero line
	TickX       string // where the count labels end
	LabelY      string // the baseline of the day labels
	Bars        []chartBar
	Ticks       []chartTick
}

type chartBar struct {
	X, Width string
	LabelX   string
	Label    string // the day, as MM-DD
	Segments []chartSegment
}

type chartSegment struct {
	Y, Height string
	Class     string
	Title     string
}

type chartTick struct {
	Y     string
	Label string
}

// layoutChart places one bar per day, each stacked from its series'
// counts, on a count axis that ends at a round number.
func layoutChart(d dashboard.Dashboard, withTenant bool) chart {
	var peak int64
	for _, day := range d.Days {
		peak = max(peak, day.Total)
	}
	top := roundUp(peak)
	y := func(n int64) float64 { return chartTop + plotHeight*(1-float64(n)/float64(top)) }

	c := chart{
		ViewBox: fmt.Sprintf("0 0 %d %d", chartWidth, chartHeight),
		Left:    strconv.Itoa(chartLeft), Right: strconv.Itoa(chartWidth - chartRight),
		Base: coord(y(0)), TickX: strconv.Itoa(chartLeft - 6), LabelY: strconv.Itoa(chartHeight - 6),
	}
	for _, n := range []int64{0, top / 2, top} {
		if n == top/2 && top%2 != 0 {
			continue // a half-way tick would not be a whole count
		}
		c.Ticks = append(c.Ticks, chartTick{Y: coord(y(n)), Label: count(n)})
	}
	slot := float64(plotWidth) / float64(len(d.Days))
	for i, day := range d.Days {
		x := chartLeft + slot*float64(i)
		bar := chartBar{
			X: coord(x + slot*0.15), Width: coord(slot * 0.7), LabelX: coord(x + slot/2),
			Label: day.Date.Format("01-02"),
		}
		var below int64
		for s, n := range day.Counts {
			if n == 0 {
				continue
			}
			bar.Segments = append(bar.Segments, chartSegment{
				Y: coord(y(below + n)), Height: coord(y(below) - y(below+n)), Class: seriesClass(s),
				Title: fmt.Sprintf("%s, %s: %d blocked", day.Date.Format("2006-01-02"), typeLabel(d.Series[s], withTenant), n),
			})
			below += n
		}
		c.Bars = append(c.Bars, bar)
	}
	return c
}

// roundUp is the smallest of 1, 2 and 5 times a power of ten that is at
// least n (and at least 1, so that an empty chart has an axis).
func roundUp(n int64) int64 {
	for step := int64(1); ; step *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*step >= n {
				return m * step
			}
		}
	}
}

func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
