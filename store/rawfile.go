package store

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// rawFile reads a bbolt file without bbolt, for files bbolt cannot open or
// would crash on: every offset, length and page number is checked before
// it is used, a page that fails a check is recorded as unreadable and
// skipped, and the walk goes on with the rest. It knows bbolt's page
// layout (version 2, little-endian as on every platform tract builds for):
//
//	page      id u64 · flags u16 · count u16 · overflow u32 · elements…
//	branch    elements of pos u32 · ksize u32 · child page u64
//	leaf      elements of flags u32 · pos u32 · ksize u32 · vsize u32;
//	          key and value at the element's offset plus pos
//	bucket    a leaf value with flag 1: root page u64 · sequence u64, and
//	          when the root is 0 the bucket's one page inline after it
//	meta      pages 0 and 1: magic u32 · version u32 · page size u32 ·
//	          flags u32 · root bucket (16 bytes) · free list u64 ·
//	          high-water page u64 · txid u64 · FNV-1a checksum u64
type rawFile struct {
	r        io.ReaderAt
	size     int64
	pageSize int64
	seen     map[uint64]bool
	// unreadable says, for each page that could not be read, why.
	unreadable map[uint64]string
	// budget bounds the keys a walk may visit: nested inline buckets can
	// overlap in a damaged page, and would otherwise be walked over and
	// over. Every key takes 16 bytes of the file at least, so an honest
	// file never comes near it.
	budget int
}

const (
	rawPageHeader   = 16
	rawElement      = 16
	rawFlagBranch   = 0x01
	rawFlagLeaf     = 0x02
	rawFlagFreelist = 0x10
	rawBucketFlag   = 0x01
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	rawMaxDepth     = 64
	// rawMaxPage bounds a page's size with its overflow, so a damaged
	// overflow count cannot make the reader allocate gigabytes.
	rawMaxPage = 1 << 30
)

// rawMeta is what a valid meta page says.
type rawMeta struct {
	pageSize int64
	root     uint64
	txid     uint64
}

// rawBucket is a bucket to walk: a root page, or an inline page.
type rawBucket struct {
	root   uint64
	inline []byte
}

// openRaw reads the meta pages of the file r of size bytes and returns a
// reader positioned on the newest valid one. ok is false when neither
// meta page is valid.
func openRaw(r io.ReaderAt, size int64) (*rawFile, rawMeta, bool) {
	f := &rawFile{r: r, size: size, seen: map[uint64]bool{}, unreadable: map[uint64]string{}, budget: int(size/rawElement) + 1024}
	var best rawMeta
	found := false
	first, ok := f.meta(0)
	if ok {
		best, found = first, true
	}
	// The second meta page sits one page in; without a valid first one,
	// try the page sizes bbolt uses.
	sizes := []int64{first.pageSize}
	if !ok {
		sizes = []int64{4096, int64(os.Getpagesize()), 8192, 16384, 65536}
	}
	for _, ps := range sizes {
		if m, ok := f.meta(ps); ok && ps == m.pageSize {
			if !found || m.txid > best.txid {
				best = m
			}
			found = true
			break
		}
	}
	f.pageSize = best.pageSize
	return f, best, found
}

// rawPageSizes are the page sizes bbolt uses, to look for pages at when
// neither meta page says which one the file has.
var rawPageSizes = []int64{4096, 8192, 16384, 65536}

// rawGuessPages bounds how many pages guessPageSize looks at per page size.
const rawGuessPages = 1024

// guessPageSize returns the page size of the file r of size bytes when
// neither meta page is valid but the file is a bbolt file all the same:
// a meta page that still begins with bbolt's magic (and says its page
// size), or, past the meta pages, a page that names itself (its header
// holds its own page number) as a branch, leaf or free-list page. Other
// files do neither: eight bytes at a page boundary that spell that
// page's number, followed by a page type, do not happen by chance.
func guessPageSize(r io.ReaderAt, size int64) (int64, bool) {
	le := binary.LittleEndian
	b := make([]byte, rawPageHeader+16)
	for _, off := range append([]int64{0}, rawPageSizes...) {
		if _, err := r.ReadAt(b, off); err != nil || le.Uint32(b[rawPageHeader:]) != boltMagic {
			continue
		}
		ps := int64(le.Uint32(b[rawPageHeader+8:]))
		if ps >= 1024 && ps <= 1<<20 && ps&(ps-1) == 0 && (off == 0 || off == ps) {
			return ps, true
		}
	}
	hdr := b[:rawPageHeader]
	for _, ps := range rawPageSizes {
		for id := int64(2); id < min(size/ps, rawGuessPages); id++ {
			if _, err := r.ReadAt(hdr, id*ps); err != nil {
				break
			}
			switch le.Uint16(hdr[8:]) {
			case rawFlagBranch, rawFlagLeaf, rawFlagFreelist:
				if le.Uint64(hdr) == uint64(id) {
					return ps, true
				}
			}
		}
	}
	return 0, false
}

// metaDamage says what is wrong with the file r of size bytes, for a file
// bbolt refused to open: a bbolt file shorter than its two meta pages, or
// one whose meta pages are both damaged. ok is false when the file has a
// valid meta page and room for both (bbolt refused it for another reason)
// or is not a bbolt file at all.
func metaDamage(r io.ReaderAt, size int64) (what string, ok bool) {
	if _, meta, ok := openRaw(r, size); ok {
		if size < 2*meta.pageSize {
			return fmt.Sprintf("the file is cut short: %d bytes, not even its two meta pages of %d bytes", size, meta.pageSize), true
		}
		return "", false
	}
	if _, ok := guessPageSize(r, size); ok {
		return "neither meta page is valid: both of the file's headers are damaged", true
	}
	return "", false
}

// meta parses the meta page at off.
func (f *rawFile) meta(off int64) (rawMeta, bool) {
	b := make([]byte, rawPageHeader+64)
	if _, err := f.r.ReadAt(b, off); err != nil {
		return rawMeta{}, false
	}
	m := b[rawPageHeader:]
	le := binary.LittleEndian
	h := fnv.New64a()
	h.Write(m[:56])
	if le.Uint32(m[0:]) != boltMagic || le.Uint32(m[4:]) != boltVersion || h.Sum64() != le.Uint64(m[56:]) {
		return rawMeta{}, false
	}
	ps := int64(le.Uint32(m[8:]))
	if ps < 1024 || ps > 1<<20 || ps&(ps-1) != 0 {
		return rawMeta{}, false
	}
	return rawMeta{pageSize: ps, root: le.Uint64(m[16:]), txid: le.Uint64(m[48:])}, true
}

// page reads page id with its overflow pages, checking that it says it is
// page id and lies inside the file.
func (f *rawFile) page(id uint64) ([]byte, error) {
	if id < 2 || id > uint64(f.size/f.pageSize) {
		return nil, fmt.Errorf("lies past the end of the file (%d bytes)", f.size)
	}
	off := int64(id) * f.pageSize
	hdr := make([]byte, rawPageHeader)
	if _, err := f.r.ReadAt(hdr, off); err != nil {
		return nil, fmt.Errorf("cannot be read: %v", err)
	}
	if got := binary.LittleEndian.Uint64(hdr); got != id {
		return nil, fmt.Errorf("holds the header of page %d", got)
	}
	n := (int64(binary.LittleEndian.Uint32(hdr[12:])) + 1) * f.pageSize
	if n > rawMaxPage || off+n > f.size {
		return nil, fmt.Errorf("says it runs for %d bytes, past the end of the file", n)
	}
	p := make([]byte, n)
	if _, err := f.r.ReadAt(p, off); err != nil {
		return nil, fmt.Errorf("cannot be read: %v", err)
	}
	return p, nil
}

// lose records page id as unreadable.
func (f *rawFile) lose(id uint64, format string, args ...any) {
	if _, ok := f.unreadable[id]; !ok {
		f.unreadable[id] = fmt.Sprintf(format, args...)
	}
}

// each calls fn for every key of bucket b that it can read: with the
// value, or with the nested bucket when the key names one.
func (f *rawFile) each(b rawBucket, fn func(k, v []byte, child *rawBucket)) {
	if b.root == 0 {
		f.leaf(0, b.inline, fn)
		return
	}
	f.node(b.root, 0, fn)
}

func (f *rawFile) node(id uint64, depth int, fn func(k, v []byte, child *rawBucket)) {
	if f.budget--; f.budget < 0 {
		return
	}
	switch {
	case depth > rawMaxDepth:
		f.lose(id, "is deeper than %d levels in its tree", rawMaxDepth)
		return
	case f.seen[id]:
		f.lose(id, "is reached twice")
		return
	}
	f.seen[id] = true
	p, err := f.page(id)
	if err != nil {
		f.lose(id, "%v", err)
		return
	}
	le := binary.LittleEndian
	switch flags := le.Uint16(p[8:]); {
	case flags == rawFlagBranch:
		count := int(le.Uint16(p[10:]))
		if rawPageHeader+count*rawElement > len(p) {
			f.lose(id, "lists %d children, more than fit", count)
			return
		}
		for i := range count {
			e := rawPageHeader + i*rawElement
			f.node(le.Uint64(p[e+8:]), depth+1, fn)
		}
	case flags == rawFlagLeaf:
		f.leaf(id, p, fn)
	default:
		f.lose(id, "is not a branch or leaf page (flags %#x)", flags)
	}
}

// leaf calls fn for the elements of the leaf page p (page id, or an
// inline page when id is 0) that lie inside it.
func (f *rawFile) leaf(id uint64, p []byte, fn func(k, v []byte, child *rawBucket)) {
	le := binary.LittleEndian
	if len(p) < rawPageHeader {
		f.lose(id, "an inline bucket is cut short")
		return
	}
	count := int(le.Uint16(p[10:]))
	if rawPageHeader+count*rawElement > len(p) {
		f.lose(id, "lists %d keys, more than fit", count)
		return
	}
	for i := range count {
		if f.budget--; f.budget < 0 {
			f.lose(id, "holds more keys than the file has room for (nested buckets that overlap): the rest is not read")
			return
		}
		e := rawPageHeader + i*rawElement
		flags, pos := le.Uint32(p[e:]), uint64(le.Uint32(p[e+4:]))
		ksize, vsize := uint64(le.Uint32(p[e+8:])), uint64(le.Uint32(p[e+12:]))
		start := uint64(e) + pos
		end := start + ksize + vsize
		if end > uint64(len(p)) {
			f.lose(id, "key %d lies past the page", i)
			continue
		}
		k, v := p[start:start+ksize], p[start+ksize:end]
		if flags&rawBucketFlag == 0 {
			fn(k, v, nil)
			continue
		}
		if len(v) < 16 {
			f.lose(id, "nested bucket %q has a short header", k)
			continue
		}
		child := &rawBucket{root: le.Uint64(v)}
		if child.root == 0 {
			child.inline = v[16:]
		}
		fn(k, nil, child)
	}
}
