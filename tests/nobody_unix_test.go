//go:build unix

package tests

import (
	"os/exec"
	"syscall"
)

// asNobody returns a copy whose commands run as the unprivileged user
// nobody (65534), for tests of what a user without write permission sees
// when the tests themselves run as root.
func (s *sandbox) asNobody() *sandbox {
	c := *s
	c.prepare = func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	return &c
}
