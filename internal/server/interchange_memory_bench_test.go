package server_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/loadgen"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/server"
	"github.com/lefia/edihub/internal/testfactory"
)

// largeInterchange is an X12 interchange of n 850 transaction sets of
// about setSize bytes each, its control numbers and order numbers
// starting at first, so that each call's is new.
func largeInterchange(n, setSize int, first int) []byte {
	var x bytes.Buffer
	control := first % 1_000_000_000
	fmt.Fprintf(&x, "ISA*00*          *00*          *ZZ*ACMEBUYER      *ZZ*EDIHUBSELLER   *261204*0941*U*00401*%09d*0*P*>~\n", control)
	fmt.Fprintf(&x, "GS*PO*ACMEBUYER*EDIHUBSELLER*20261204*0941*%d*X*004010~\n", control)
	for i := range n {
		set := fmt.Sprintf("%09d", (first+i)%1_000_000_000)
		start := x.Len()
		fmt.Fprintf(&x, "ST*850*%s~\nBEG*00*SA*PO-%s**20261204~\n", set, set)
		lines := 0
		for x.Len()-start < setSize-40 {
			lines++
			fmt.Fprintf(&x, "PO1*%d*12*EA*9.95**BP*ABC-%06d~\n", lines, lines)
		}
		fmt.Fprintf(&x, "CTT*%d~\nSE*%d*%s~\n", lines, lines+4, set)
	}
	fmt.Fprintf(&x, "GE*%d*%d~\nIEA*1*%09d~\n", n, control, control)
	return x.Bytes()
}

// heapPeak samples the bytes of live and unswept heap objects every
// millisecond until stop is closed, and returns the highest.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// BenchmarkLargeInterchangeMemory stores a 10 MiB X12 interchange of 1,000
// transaction sets, and beside it an IDoc-XML packet of 1,000 IDocs of the
// same size, through the whole server in this process, and reports the
// heap's peak above what it held before the post (peak-heap-MiB) and the
// bytes allocated per byte of the body (alloc-B/byte): memory bounded by a
// small multiple of the body, as the body budget (MAX_BODY_BYTES_IN_PROCESS)
// assumes, and alike for both forms.
func BenchmarkLargeInterchangeMemory(b *testing.B) {
	pool := pgtest.Pool(b)
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(server.New(cfg, pool, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	b.Cleanup(srv.Close)
	testfactory.TenantWithEnvironment(b, pool, "acme")
	key := testfactory.APIKey(b, pool, nil)
	testfactory.MessageType(b, pool, &testfactory.MessageTypeOpts{Code: "850", Fields: []string{"BEG.0.BEG03"}})
	testfactory.MessageType(b, pool, &testfactory.MessageTypeOpts{Code: "ORDERS05", Fields: []string{"*.IDOC.E1EDK01.BELNR"}})
	const messages, size = 1000, 10_000
	var next atomic.Int64
	next.Store(1)
	forms := []struct {
		name, contentType string
		body              func(first int) []byte
	}{
		{"interchange", "application/edi-x12", func(first int) []byte { return largeInterchange(messages, size, first) }},
		{"idoc-packet", "application/x-sap.idoc", func(first int) []byte { return loadgen.Packet(messages, size, uint64(first)) }},
	}
	for _, form := range forms {
		b.Run(form.name, func(b *testing.B) {
			var peak, allocated uint64
			var bodyBytes int
			for b.Loop() {
				body := form.body(int(next.Add(messages)))
				bodyBytes = len(body)
				b.SetBytes(int64(len(body)))
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := make(chan struct{})
				peaks := heapPeak(stop)
				req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/edi-hub/receive-message", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", form.contentType)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				answer, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				close(stop)
				p := <-peaks
				runtime.ReadMemStats(&after)
				if resp.StatusCode != http.StatusOK || bytes.Count(answer, []byte(`"status":"accepted"`)) < messages {
					b.Fatalf("status %d: %.300s", resp.StatusCode, answer)
				}
				peak = max(peak, p-min(p, before.HeapAlloc))
				allocated += after.TotalAlloc - before.TotalAlloc
			}
			b.ReportMetric(float64(bodyBytes)/(1<<20), "body-MiB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(allocated)/float64(b.N)/float64(bodyBytes), "alloc-B/byte")
		})
	}
}
