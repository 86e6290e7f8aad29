// Command edihub-receiver is a destination to try deliveries with: it
// answers every POST with 200 and prints one line per delivery (its
// webhook-id, message, type, docnum and size), marking a webhook-id it has
// seen before as a repeat. With -secret it also checks the Standard
// Webhooks signature. `make run` starts it beside the demo.
//
//	edihub-receiver [-addr 127.0.0.1:8099] [-secret whsec_…]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/lefia/edihub/internal/signature"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8099", "address to listen on")
	secret := flag.String("secret", "", "the destination's whsec_ secret; empty: signatures are not checked")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: *addr, Handler: newReceiver(*secret, os.Stdout), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	log.Printf("edihub-receiver listening on %s", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// receiver prints the deliveries it gets.
type receiver struct {
	secret string
	out    io.Writer
	mu     sync.Mutex
	seen   map[string]bool
}

func newReceiver(secret string, out io.Writer) *receiver {
	return &receiver{secret: secret, out: out, seen: map[string]bool{}}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST deliveries here", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	check := "signature not checked"
	if rc.secret != "" {
		if _, err := signature.Verify(signature.StandardWebhooks, []string{rc.secret}, r.Header, body, time.Now()); err != nil {
			http.Error(w, "bad signature: "+err.Error(), http.StatusUnauthorized)
			fmt.Fprintf(rc.out, "refused %s: %v\n", r.Header.Get("webhook-id"), err)
			return
		}
		check = "signature ok"
	}
	id := r.Header.Get("webhook-id")
	rc.mu.Lock()
	repeat := rc.seen[id]
	rc.seen[id] = true
	rc.mu.Unlock()
	kind := "delivery"
	if repeat {
		kind = "repeat  "
	}
	fmt.Fprintf(rc.out, "%s %s %s message=%s type=%s docnum=%s bytes=%d (%s)\n", time.Now().Format(time.TimeOnly), kind, id,
		r.Header.Get("Edihub-Message-Id"), r.Header.Get("Edihub-Message-Type"), r.Header.Get("Edihub-Docnum"), len(body), check)
	w.WriteHeader(http.StatusOK)
}
