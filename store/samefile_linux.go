//go:build linux

package store

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// namesFile reports whether path names the file held describes (held is
// the file's own FileInfo, from the open descriptor).
//
// It asks the kernel for the file's inode number alone (statx with
// STATX_INO), not for its times as stat does. Since Linux 6.13, ext4,
// xfs, btrfs and tmpfs stamp a file's next change with a fine-grained
// time once someone has read its change time, which dirties the inode
// at every write: fdatasync then writes the inode as well as the data
// (on ext4 without a journal, one more synchronous write per sync).
// Asked before every write transaction, a stat made each commit write
// its inode; this check leaves the times unread, so a change within the
// same clock tick as the last one leaves the inode alone.
func namesFile(path string, held os.FileInfo) bool {
	st, ok := held.Sys().(*syscall.Stat_t)
	if !ok {
		return namesFileStat(path, held)
	}
	var stx unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, unix.AT_STATX_SYNC_AS_STAT, unix.STATX_INO, &stx)
	switch {
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		// A kernel before statx (4.11), or a sandbox that refuses it.
		return namesFileStat(path, held)
	case err != nil:
		return false
	}
	return stx.Ino == uint64(st.Ino) && unix.Mkdev(stx.Dev_major, stx.Dev_minor) == uint64(st.Dev)
}
