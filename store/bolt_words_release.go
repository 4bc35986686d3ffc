package store

import (
	"slices"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// mapRelease gives back the pages of the file's memory map that a bulk
// build of the word index read: it reads every text and commit it
// indexes, and each page read through the map stays in the process's
// resident memory until the file is closed, so a build over a large
// history would hold the pages of the whole history. The pages are the
// file's, in the page cache: a read after the release finds them there.
//
// A read maps the pages around the one it needs as well (64 KiB on
// Linux by default): release gives back those windows around the values
// noted, and releaseAll the whole map, for any the system mapped beyond.
type mapRelease struct {
	tx *bolt.Tx
	// at is the address of a value read through the map (nil: none yet),
	// through which the start of the map is found.
	at unsafe.Pointer
	// spans are the offsets in the map of the values noted, from and to.
	spans [][2]uintptr
}

// releaseWindow is the alignment and size of the windows release gives
// back around each value.
const releaseWindow = 64 << 10

// note records v, a value the transaction returned, when it lies in the
// map (not in a page the transaction wrote).
func (m *mapRelease) note(v []byte) {
	if len(v) == 0 {
		return
	}
	start, size := m.tx.DB().Info().Data, uintptr(m.tx.Size())
	p := unsafe.Pointer(unsafe.SliceData(v))
	if a := uintptr(p); a >= start && a+uintptr(len(v)) <= start+size {
		if m.at == nil {
			m.at = p
		}
		m.spans = append(m.spans, [2]uintptr{a - start, a - start + uintptr(len(v))})
	}
}

// mapped returns the map as a slice (nil when nothing was noted, or the
// file was mapped again since).
func (m *mapRelease) mapped() []byte {
	at := m.at
	m.at = nil
	if at == nil {
		return nil
	}
	start, size := m.tx.DB().Info().Data, uintptr(m.tx.Size())
	if a := uintptr(at); a < start || a >= start+size {
		return nil // mapped again since: the value read is not in this map
	}
	// bbolt maps at least every page a transaction allocates, so the map
	// spans tx.Size() bytes from its start.
	base := unsafe.Add(at, -int(uintptr(at)-start))
	return unsafe.Slice((*byte)(base), size)
}

// release gives back the windows of the map around the values noted
// since the last release.
func (m *mapRelease) release() {
	spans := m.spans
	m.spans = m.spans[:0]
	data := m.mapped()
	if data == nil {
		return
	}
	slices.SortFunc(spans, func(a, b [2]uintptr) int { return compareUintptr(a[0], b[0]) })
	from, to := uintptr(0), uintptr(0)
	for _, s := range spans {
		lo := s[0] &^ (releaseWindow - 1)
		hi := min((s[1]+releaseWindow-1)&^(releaseWindow-1), uintptr(len(data)))
		if lo <= to && to > from {
			to = max(to, hi)
			continue
		}
		if to > from {
			releaseMapped(data[from:to])
		}
		from, to = lo, hi
	}
	if to > from {
		releaseMapped(data[from:to])
	}
}

// releaseAll gives back every page of the map.
func (m *mapRelease) releaseAll() {
	m.spans = m.spans[:0]
	if data := m.mapped(); data != nil {
		releaseMapped(data)
	}
}

func compareUintptr(a, b uintptr) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
