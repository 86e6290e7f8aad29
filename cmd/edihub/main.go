// Command edihub receives EDI messages and webhooks over HTTP and stores each
// business document exactly once. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/lefia/edihub/internal/cli"
)

func main() {
	// SIGTERM and Ctrl-C cancel the context: serve then finishes in-flight
	// requests and exits; other commands stop where they are.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := cli.Run(ctx, cli.Env{
		Args: os.Args[1:], Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "edihub:", err)
		os.Exit(cli.ExitCode(err))
	}
}
