package store

import (
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// mapRelease gives back the pages of the file's memory map that a bulk
// build of the word index read: it reads every text and commit it
// indexes, and each page read through the map stays in the process's
// resident memory until the file is closed, so a build over a large
// history would hold the pages of the whole history. The pages are the
// file's, in the page cache: a read after the release finds them there.
type mapRelease struct {
	tx *bolt.Tx
	// at is the address of a value read through the map since the last
	// release (nil: none), through which the start of the map is found.
	at unsafe.Pointer
}

// note records v, a value the transaction returned, when it lies in the
// map (not in a page the transaction wrote).
func (m *mapRelease) note(v []byte) {
	if m.at != nil || len(v) == 0 {
		return
	}
	start, size := m.tx.DB().Info().Data, uintptr(m.tx.Size())
	p := unsafe.Pointer(unsafe.SliceData(v))
	if a := uintptr(p); a >= start && a < start+size {
		m.at = p
	}
}

// release gives back every page of the map, if a value read since the
// last release says where it is.
func (m *mapRelease) release() {
	at := m.at
	m.at = nil
	if at == nil {
		return
	}
	start, size := m.tx.DB().Info().Data, uintptr(m.tx.Size())
	if a := uintptr(at); a < start || a >= start+size {
		return // mapped again since: the value read is not in this map
	}
	// bbolt maps at least every page a transaction allocates, so the map
	// spans tx.Size() bytes from its start.
	base := unsafe.Add(at, -int(uintptr(at)-start))
	releaseMapped(unsafe.Slice((*byte)(base), size))
}
