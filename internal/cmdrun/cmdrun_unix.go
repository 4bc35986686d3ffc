//go:build unix

package cmdrun

import (
	"os/exec"
	"syscall"
)

// killProcessGroup runs cmd in a process group of its own and makes its
// cancellation kill the whole group, so that a hung command's children
// (a `sleep 100` inside a shell script) die with it.
func killProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
