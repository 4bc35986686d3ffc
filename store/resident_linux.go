package store

import (
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// dropMapped releases the pages of the file that tx's database has mapped
// from the process's resident memory (madvise MADV_DONTNEED). bbolt maps
// the file shared and read-only and writes through the file, so the
// mapping holds nothing but the file's pages: a page read again is the
// file's, from the kernel's cache. The map cannot move during tx (bbolt
// remaps only between transactions, or in a write transaction's commit).
// It is a hint: an error (a locked map) leaves the pages where they are.
func dropMapped(tx *bolt.Tx) {
	size := tx.Size()
	if size <= 0 {
		return
	}
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, tx.DB().Info().Data, uintptr(size), unix.MADV_DONTNEED)
}
