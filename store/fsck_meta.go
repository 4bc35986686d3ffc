package store

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
)

// bbolt's page flags, as rawfile.go reads them.
const rawFlagMeta = 0x04

// metaPage is what one of a bbolt file's two meta pages (pages 0 and 1)
// holds, as checkMetaPages reads it from the file itself: bbolt only
// says which of them it uses, and panics on a meta page whose header is
// damaged when it checks the file's pages.
type metaPage struct {
	id uint64
	// header says what is wrong with the page's header ("" when
	// nothing): bbolt's page check stops on such a page when headerFatal.
	header      string
	headerFatal bool
	// meta says why bbolt refuses the page's meta data ("" when it uses
	// it); txid is its transaction when it is valid.
	meta string
	txid uint64
}

// readMetaPage reads meta page id (0 or 1) of the file f, whose pages
// are pageSize bytes.
func readMetaPage(f *os.File, id uint64, pageSize int) metaPage {
	p := metaPage{id: id}
	b := make([]byte, rawPageHeader+64)
	if _, err := f.ReadAt(b, int64(id)*int64(pageSize)); err != nil {
		p.header, p.headerFatal, p.meta = fmt.Sprintf("cannot be read: %v", err), true, "unreadable"
		return p
	}
	le := binary.LittleEndian
	if allZero(b) {
		p.header, p.headerFatal, p.meta = "all zeros", true, "all zeros"
		return p
	}
	switch got, flags := le.Uint64(b), le.Uint16(b[8:]); {
	case got != id:
		p.header, p.headerFatal = fmt.Sprintf("it holds the header of page %d", got), true
	case flags != rawFlagMeta:
		p.header = fmt.Sprintf("its header marks it as %s", pageKind(flags))
		p.headerFatal = pageKind(flags) == "a page of no known kind"
	}
	m := b[rawPageHeader:]
	h := fnv.New64a()
	h.Write(m[:56])
	switch {
	case le.Uint32(m[0:]) != boltMagic:
		p.meta = "it holds no meta data"
	case le.Uint32(m[4:]) != boltVersion:
		p.meta = fmt.Sprintf("it is of format version %d, not %d", le.Uint32(m[4:]), boltVersion)
	case h.Sum64() != le.Uint64(m[56:]):
		p.meta = "its checksum does not match its contents"
	default:
		p.txid = le.Uint64(m[48:])
	}
	return p
}

// pageKind names the kind of page flags marks a page as.
func pageKind(flags uint16) string {
	switch flags {
	case rawFlagBranch:
		return "a branch page"
	case rawFlagLeaf:
		return "a leaf page"
	case rawFlagMeta:
		return "a meta page"
	case rawFlagFreelist:
		return "a free-list page"
	}
	return "a page of no known kind"
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// checkMetaPages checks the two meta pages of the bbolt file at path,
// whose pages are pageSize bytes, and reports each damaged one in r: a
// meta page bbolt cannot use (the file is then read through the other,
// and the transaction the damaged one may have recorded is lost), or one
// whose header alone is damaged. bbolt opened the file, so at least one
// meta page is valid. pagesCheckable is false when a meta page's header
// would stop bbolt's page-structure check (checkBoltPages) at its start.
func checkMetaPages(path string, pageSize int, r *FsckReport) (pagesCheckable bool) {
	f, err := os.Open(path)
	if err != nil {
		r.add("file", "cannot be read to check its meta pages: %v", err)
		return true
	}
	defer f.Close()
	pages := [2]metaPage{readMetaPage(f, 0, pageSize), readMetaPage(f, 1, pageSize)}
	pagesCheckable = true
	for i, p := range pages {
		other := pages[1-i]
		object := fmt.Sprintf("page %d", p.id)
		what := p.meta
		if p.header != "" && p.header != p.meta {
			what = p.header + "; " + p.meta
		}
		switch {
		case p.meta != "" && other.meta == "":
			r.add(object, "damaged meta page (%s): the file is read through meta page %d, as of transaction %d; a later transaction that page %d may have recorded is lost",
				what, other.id, other.txid, p.id)
		case p.meta != "":
			// Both invalid: bbolt could not have opened the file; say
			// what is wrong all the same.
			r.add(object, "damaged meta page (%s)", what)
		case p.header != "":
			r.add(object, "meta page with a damaged header (%s); its meta data (transaction %d) is intact", p.header, p.txid)
		}
		if p.headerFatal {
			pagesCheckable = false
		}
	}
	return pagesCheckable
}
