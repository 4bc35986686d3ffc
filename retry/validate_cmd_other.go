//go:build !unix

package retry

import "os/exec"

// killProcessGroup leaves exec's default cancellation, which kills only the
// shell, on systems without Unix process groups.
func killProcessGroup(cmd *exec.Cmd) {}
