package store

import "syscall"

// releaseMapped drops the pages of b, a shared read-only map of the
// file, from the process's resident memory: a later read maps them
// again from the page cache (or the file).
func releaseMapped(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }
