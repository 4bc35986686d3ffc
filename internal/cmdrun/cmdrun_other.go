//go:build !unix

package cmdrun

import "os/exec"

// killProcessGroup leaves exec's default cancellation, which kills only the
// command itself, on systems without Unix process groups.
func killProcessGroup(cmd *exec.Cmd) {}
