// Command tract keeps LLM conversations the way git keeps code. Run
// 'tract help' for the commands; the README has a tour.
package main

import (
	"context"
	"os"

	// The PostgreSQL backend: registers the driver of postgres:// and
	// postgresql:// URLs (--db, TRACT_DB, copy).
	_ "github.com/tractdag/tract/store/postgres"
)

func main() {
	io := systemIO()
	// The first Ctrl-C cancels the command; a second exits at once (see
	// interrupts).
	io.Interrupts = newInterrupts(os.Stderr, os.Exit)
	io.OneTurn = oneTurnMemory
	io.ImportMemory = importMemory
	ctx := io.Interrupts.notify(context.Background())
	io.Interrupts.exitWith(run(ctx, os.Args[1:], io, os.Getenv))
}
