//go:build !linux

package store

// releaseMapped does nothing where the madvise call is not at hand: the
// pages stay resident until the file is closed, as the system allows.
func releaseMapped([]byte) {}
