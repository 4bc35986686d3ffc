//go:build !unix

package main

import "context"

// followResize does nothing where there is no SIGWINCH: the REPL keeps
// the size the terminal had when it started.
func followResize(context.Context, int, func(width, height int)) {}
