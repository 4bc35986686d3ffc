//go:build !linux

package main

// terminateDescendants does nothing where processes are not listed in
// /proc: a pager run through a shell is asked to quit through the shell
// alone.
func terminateDescendants(int) {}
