//go:build unix

package main

import (
	"context"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// followResize calls resized with the terminal fd's new size on each
// SIGWINCH (the window was resized), so the line editor wraps a long line
// where the terminal does. It stops when ctx ends; resized runs on its
// own goroutine.
func followResize(ctx context.Context, fd int, resized func(width, height int)) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, unix.SIGWINCH)
	go func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sig:
				if w, h, err := term.GetSize(fd); err == nil && w > 0 {
					resized(w, h)
				}
			}
		}
	}()
}
