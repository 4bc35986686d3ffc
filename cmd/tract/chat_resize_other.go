//go:build !unix

package main

import (
	"context"

	"golang.org/x/term"
)

// followResize does nothing where there is no SIGWINCH: the line editor
// keeps the width the terminal had when the REPL started.
func followResize(context.Context, int, *term.Terminal) {}
