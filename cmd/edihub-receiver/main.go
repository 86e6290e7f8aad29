// Command edihub-receiver is a destination to try deliveries with: it
// prints one line per delivery (its webhook-id, message, type, docnum and
// size, and whether its signature holds), marking a webhook-id it has seen
// before as a repeat. Given the destination's secret (-secret, or
// EDIHUB_RECEIVER_SECRET), it checks each delivery's Standard Webhooks
// signature with the code edihub checks incoming ones with, and refuses one
// that does not hold with 401, as a receiver should; without it, it takes
// every delivery. `make run` starts it beside the demo.
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

// secretVariable gives the destination's secret when -secret does not, so
// that it need not show in the process list.
const secretVariable = "EDIHUB_RECEIVER_SECRET"

func main() {
	addr, secret, err := parseFlags(os.Args[1:], os.Getenv)
	if err != nil {
		os.Exit(2) // the flag package has said why
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: addr, Handler: newReceiver(secret, os.Stdout), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if secret == "" {
		log.Printf("edihub-receiver listening on %s; no secret given (-secret or %s), so signatures are not checked", addr, secretVariable)
	} else {
		log.Printf("edihub-receiver listening on %s; checking Standard Webhooks signatures", addr)
	}
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// parseFlags reads the listen address and the destination's secret, which
// a refused secret (not a whsec_ one) stops at start rather than at every
// delivery.
func parseFlags(args []string, getenv func(string) string) (addr, secret string, err error) {
	fs := flag.NewFlagSet("edihub-receiver", flag.ContinueOnError)
	fs.StringVar(&addr, "addr", "127.0.0.1:8099", "address to listen on")
	fs.StringVar(&secret, "secret", getenv(secretVariable),
		"the destination's whsec_ secret (default $"+secretVariable+"); empty: signatures are not checked")
	if err := fs.Parse(args); err != nil {
		return "", "", err
	}
	if secret != "" {
		if err := signature.ValidateSecret(signature.StandardWebhooks, secret); err != nil {
			fmt.Fprintf(fs.Output(), "-secret: %v\n", err)
			return "", "", err
		}
	}
	return addr, secret, nil
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
	id := r.Header.Get("webhook-id")
	check := "signature not checked"
	if rc.secret != "" {
		if _, err := signature.Verify(signature.StandardWebhooks, []string{rc.secret}, r.Header, body, time.Now()); err != nil {
			http.Error(w, "bad signature: "+err.Error(), http.StatusUnauthorized)
			fmt.Fprintf(rc.out, "%s refused  %s type=%s bytes=%d (signature does not hold: %v)\n", time.Now().Format(time.TimeOnly), id,
				r.Header.Get("Edihub-Message-Type"), len(body), err)
			return
		}
		check = "signature holds"
	}
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
