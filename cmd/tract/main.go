// Command tract keeps LLM conversations the way git keeps code. Run
// 'tract help' for the commands; the README has a tour.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// The PostgreSQL backend: registers the driver of postgres:// and
	// postgresql:// URLs (--db, TRACT_DB, copy).
	_ "github.com/tractdag/tract/store/postgres"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], systemIO(), os.Getenv)
	stop()
	os.Exit(code)
}
