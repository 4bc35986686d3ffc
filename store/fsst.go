package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// A symbol table compresses short texts the way FSST (Boncz, Neumann and
// Leis, "FSST: Fast Random Access String Compression", VLDB 2020) does:
// up to 255 symbols of 1 to 8 bytes, each written as a one-byte code, and
// any other byte as an escape code followed by the byte. A text decodes
// on its own, without the table being set up for it, at a table lookup
// and an 8-byte store a code: a text of a few hundred bytes decodes in
// well under a microsecond, where a zstd frame with a dictionary costs
// several (its entropy tables are read and built for every frame).
//
// The table is trained on the file's own texts; its symbols are pieces of
// them, so (as a dictionary's content would) a symbol could keep a piece
// of a text after the text is erased. Every symbol of two bytes or more is
// therefore one seen in at least minShared distinct texts of the sample
// (see trainSymbols).

// fsstEscape is the code before a byte the table has no symbol for.
const fsstEscape = 255

// fsstMaxSymbols is the most symbols a table holds.
const fsstMaxSymbols = 255

// fsstTable is a trained symbol table with what encoding and decoding
// need. It is never changed once made, and safe for concurrent use.
type fsstTable struct {
	n    int
	syms [fsstMaxSymbols]uint64 // the bytes of each symbol, little-endian
	lens [fsstMaxSymbols]uint8
	// byte1 is the code of the one-byte symbol of each byte value,
	// fsstEscape for none.
	byte1 [256]uint8
	// by2 lists, for each first two bytes (little-endian), the codes of
	// the symbols of two bytes or more that start with them, longest
	// first: by2Codes[by2Start[p]:by2Start[p+1]].
	by2Start []uint16
	by2Codes []uint8
}

// errBadSymbols is wrapped by the error of a symbol table that does not
// parse.
var errBadSymbols = errors.New("bad symbol table")

// newFSSTTable returns the table of symbols (each 1 to 8 bytes, at most
// fsstMaxSymbols of them, none twice).
func newFSSTTable(symbols [][]byte) (*fsstTable, error) {
	if len(symbols) > fsstMaxSymbols {
		return nil, fmt.Errorf("%w: %d symbols", errBadSymbols, len(symbols))
	}
	t := &fsstTable{n: len(symbols)}
	for i := range t.byte1 {
		t.byte1[i] = fsstEscape
	}
	seen := make(map[string]bool, len(symbols))
	for i, s := range symbols {
		if len(s) == 0 || len(s) > 8 || seen[string(s)] {
			return nil, fmt.Errorf("%w: symbol %d", errBadSymbols, i)
		}
		seen[string(s)] = true
		t.syms[i], t.lens[i] = load64(s), uint8(len(s))
		if len(s) == 1 {
			t.byte1[s[0]] = uint8(i)
		}
	}
	// Symbols of two bytes or more, by their first two bytes, longest
	// first.
	var long []int
	for i, s := range symbols {
		if len(s) >= 2 {
			long = append(long, i)
		}
	}
	slices.SortFunc(long, func(a, b int) int {
		pa, pb := uint16(t.syms[a]), uint16(t.syms[b])
		if pa != pb {
			return int(pa) - int(pb)
		}
		return int(t.lens[b]) - int(t.lens[a])
	})
	t.by2Start = make([]uint16, 1<<16+1)
	t.by2Codes = make([]uint8, len(long))
	for i, c := range long {
		t.by2Codes[i] = uint8(c)
		t.by2Start[uint16(t.syms[c])+1]++
	}
	for p := 1; p < len(t.by2Start); p++ {
		t.by2Start[p] += t.by2Start[p-1]
	}
	return t, nil
}

// load64 returns up to the first 8 bytes of b, little-endian, the rest 0.
func load64(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)
	}
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// symbol returns the bytes of code c.
func (t *fsstTable) symbol(c uint8) []byte {
	return binary.LittleEndian.AppendUint64(nil, t.syms[c])[:t.lens[c]]
}

// next returns the code that encodes the longest symbol at the start of
// text (len(text) > 0) and the symbol's length; fsstEscape and 1 when none
// does.
func (t *fsstTable) next(text []byte) (uint8, int) {
	if len(text) >= 2 {
		w := load64(text)
		p := uint16(w)
		for _, c := range t.by2Codes[t.by2Start[p]:t.by2Start[int(p)+1]] {
			l := int(t.lens[c])
			if l > len(text) {
				continue
			}
			mask := ^uint64(0) >> (64 - 8*l)
			if w&mask == t.syms[c] {
				return c, l
			}
		}
	}
	return t.byte1[text[0]], 1
}

// encode appends the codes of text to dst.
func (t *fsstTable) encode(dst, text []byte) []byte {
	for len(text) > 0 {
		c, l := t.next(text)
		if c == fsstEscape {
			dst = append(dst, fsstEscape, text[0])
		} else {
			dst = append(dst, c)
		}
		text = text[l:]
	}
	return dst
}

// decode returns the text of codes, in new memory (at most 8 bytes a
// code: damaged codes cannot make it allocate more).
func (t *fsstTable) decode(codes []byte) ([]byte, error) {
	n := 0
	for i := 0; i < len(codes); i++ {
		c := codes[i]
		switch {
		case c == fsstEscape:
			if i++; i == len(codes) {
				return nil, errors.New("an escape code at the end")
			}
			n++
		case int(c) >= t.n:
			return nil, fmt.Errorf("code %d of a table of %d symbols", c, t.n)
		default:
			n += int(t.lens[c])
		}
	}
	out := make([]byte, n+8)
	at := 0
	for i := 0; i < len(codes); i++ {
		c := codes[i]
		if c == fsstEscape {
			i++
			out[at] = codes[i]
			at++
			continue
		}
		binary.LittleEndian.PutUint64(out[at:], t.syms[c])
		at += int(t.lens[c])
	}
	return out[:n:n], nil
}

// marshal returns the table in its stored form: per symbol, its length
// and its bytes.
func (t *fsstTable) marshal() []byte {
	out := make([]byte, 0, 1+9*t.n)
	for c := range t.n {
		out = append(out, t.lens[c])
		out = append(out, t.symbol(uint8(c))...)
	}
	return out
}

// parseFSSTTable returns the table of stored form b (see marshal).
func parseFSSTTable(b []byte) (*fsstTable, error) {
	var symbols [][]byte
	for len(b) > 0 {
		l := int(b[0])
		if l < 1 || l > 8 || 1+l > len(b) {
			return nil, fmt.Errorf("%w: a symbol of %d bytes", errBadSymbols, l)
		}
		symbols = append(symbols, b[1:1+l])
		b = b[1+l:]
	}
	return newFSSTTable(symbols)
}

// fsstRounds is how many rounds of compressing the sample and choosing
// symbols again training takes (FSST's own choice).
const fsstRounds = 5

// trainSymbols returns the symbols of a table for texts like sample: in
// each round the sample is encoded with the table so far, and the new
// table takes the symbols, and the concatenations of two symbols that
// follow one another, that saved (or would save) the most bytes. Only
// symbols seen in at least minShared distinct texts of the sample are
// taken (a one-byte symbol is no piece of a text).
func trainSymbols(sample [][]byte, minShared int32) [][]byte {
	const codes = 256 + 256 // a symbol's code, or 256+b for an escaped b
	type stat struct {
		count, texts, last int32
	}
	var symbols [][]byte
	t, _ := newFSSTTable(nil)
	for round := range fsstRounds {
		single := make([]stat, codes)
		pairs := make([]stat, codes*codes)
		for i := range single {
			single[i].last = -1
		}
		for i := range pairs {
			pairs[i].last = -1
		}
		count := func(s *stat, text int32) {
			s.count++
			if s.last != text {
				s.last, s.texts = text, s.texts+1
			}
		}
		for i, text := range sample {
			prev := -1
			for rest := text; len(rest) > 0; {
				c, l := t.next(rest)
				code := int(c)
				if c == fsstEscape {
					code = 256 + int(rest[0])
				}
				count(&single[code], int32(i))
				if prev >= 0 {
					count(&pairs[prev*codes+code], int32(i))
				}
				prev = code
				rest = rest[l:]
			}
		}
		bytesOf := func(code int) []byte {
			if code >= 256 {
				return []byte{byte(code - 256)}
			}
			return t.symbol(uint8(code))
		}
		// Candidates by their gain: the bytes they cover, a one-byte
		// symbol counted 8 times over in the early rounds (as FSST does:
		// escapes cost two bytes).
		gains := map[string]int64{}
		for code, s := range single {
			if s.count == 0 {
				continue
			}
			b := bytesOf(code)
			if len(b) > 1 && s.texts < minShared {
				continue
			}
			g := int64(s.count) * int64(len(b))
			if len(b) == 1 && round < fsstRounds-1 {
				g *= 8
			}
			gains[string(b)] += g
		}
		for p, s := range pairs {
			if s.count == 0 || s.texts < minShared {
				continue
			}
			b := append(bytesOf(p/codes), bytesOf(p%codes)...)
			if len(b) > 8 {
				b = b[:8]
			}
			gains[string(b)] += int64(s.count) * int64(len(b))
		}
		type cand struct {
			s    string
			gain int64
		}
		var cands []cand
		for s, g := range gains {
			cands = append(cands, cand{s, g})
		}
		slices.SortFunc(cands, func(a, b cand) int {
			if a.gain != b.gain {
				if a.gain > b.gain {
					return -1
				}
				return 1
			}
			if a.s < b.s {
				return -1
			}
			return 1
		})
		symbols = symbols[:0]
		for _, c := range cands[:min(len(cands), fsstMaxSymbols)] {
			symbols = append(symbols, []byte(c.s))
		}
		t, _ = newFSSTTable(symbols)
	}
	return symbols
}
