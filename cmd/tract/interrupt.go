package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interrupts is what Ctrl-C (SIGINT) and SIGTERM do to the process. The
// first cancels the command's context: what it waits on (a model, a
// validator, a lock, a database server) stops, and it cleans up, which
// may still write (an interrupted turn is recorded) and so may still wait
// on a lock or a server, within their timeouts. A second exits at once,
// with 130, after undoing what the command changed about the terminal
// (the REPL's raw mode). Exiting then leaves nothing half-written: every
// write to a repository is one transaction, which a process that ends
// before its commit never made (bbolt's file keeps its last committed
// state; PostgreSQL rolls back the transaction of a connection that
// closes), and files are written under a temporary name and renamed into
// place when complete.
type interrupts struct {
	errOut io.Writer
	exit   func(code int)

	mu       sync.Mutex
	restores map[int]func() // what to undo before exiting at once
	next     int
	exiting  bool
}

func newInterrupts(errOut io.Writer, exit func(int)) *interrupts {
	return &interrupts{errOut: errOut, exit: exit, restores: make(map[int]func())}
}

// notify returns a context that the first SIGINT or SIGTERM cancels; a
// second calls hardExit. The handling lasts until the process exits:
// main exits as soon as the command returns, and undoing signal.Notify
// first (signal.Stop, a round trip to the runtime's signal thread) only
// added 0.1 ms to every command.
func (in *interrupts) notify(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for n := 0; ; n++ {
			<-sigs
			if n == 0 {
				cancel()
				continue
			}
			in.hardExit()
		}
	}()
	return ctx
}

// exitWith ends the process with the command's exit code, unless a
// second interrupt's hardExit is under way: a command that returns
// because hardExit stopped what it waited on (a pager) must not exit
// before hardExit has said why, with its own code. A signal that comes
// after finds the process exiting and does nothing.
func (in *interrupts) exitWith(code int) {
	in.mu.Lock()
	if in.exiting {
		in.mu.Unlock()
		select {} // hardExit exits
	}
	in.exiting = true
	in.mu.Unlock()
	in.exit(code)
}

// onHardExit registers fn to run before hardExit exits (a terminal's
// mode to restore); remove unregisters it, once the command undid the
// change itself. On a nil *interrupts (a test's run) it does nothing.
func (in *interrupts) onHardExit(fn func()) (remove func()) {
	if in == nil {
		return func() {}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	id := in.next
	in.next++
	in.restores[id] = fn
	return func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		delete(in.restores, id)
	}
}

// hardExit runs what onHardExit registered, says why the process ends,
// and exits with 130. It does nothing on a nil *interrupts (a test's run:
// the process is the test's).
func (in *interrupts) hardExit() {
	if in == nil {
		return
	}
	in.mu.Lock()
	if in.exiting {
		in.mu.Unlock()
		return
	}
	in.exiting = true
	for _, fn := range in.restores {
		fn()
	}
	in.mu.Unlock()
	fmt.Fprintln(in.errOut, "\ntract: interrupted again: exiting at once; every commit made so far is intact "+
		"(a transaction under way is rolled back), see 'tract log'")
	in.exit(exitInterrupt)
}
