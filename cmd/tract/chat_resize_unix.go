//go:build unix

package main

import (
	"context"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// followResize keeps the line editor's width that of the terminal fd:
// on each SIGWINCH (the window was resized) it reads the new size, so a
// long line wraps where the terminal wraps it. It stops when ctx ends.
func followResize(ctx context.Context, fd int, t *term.Terminal) {
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
					_ = t.SetSize(w, h) // a repaint that fails leaves the old width: nothing better to do
				}
			}
		}
	}()
}
