// Package fsst compresses short texts with a trained symbol table, the
// way FSST (Boncz, Neumann and Leis, "FSST: Fast Random Access String
// Compression", VLDB 2020) does: up to 255 symbols of 1 to 8 bytes, each
// written as a one-byte code, and any other byte as an escape code
// followed by the byte. A text decodes on its own, without the table
// being set up for it, at a table lookup and an 8-byte store a code: a
// text of a few hundred bytes decodes in a fraction of a microsecond,
// where a zstd frame with a dictionary costs several (its entropy tables
// are read and built for every frame).
//
// Caveats: the symbols are pieces of the texts a table was trained on.
// Train takes only symbols seen in a given number of distinct texts of
// its sample, so that a string of one text, or of a few, never enters a
// table; a caller that must be able to erase a text keeps that number
// high enough.
package fsst

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Escape is the code before a byte a table has no symbol for.
const Escape = 255

// MaxSymbols is the most symbols a table holds.
const MaxSymbols = 255

// Table is a symbol table with what encoding and decoding need. It is
// never changed once made, and safe for concurrent use.
type Table struct {
	n     int
	syms  [MaxSymbols]uint64 // the bytes of each symbol, little-endian
	masks [MaxSymbols]uint64 // of each symbol, its bytes' bits set
	lens  [MaxSymbols]uint8
	// byte1 is the code of the one-byte symbol of each byte value,
	// Escape for none.
	byte1 [256]uint8
	// byte2 is the code of the two-byte symbol of each two bytes
	// (little-endian), Escape for none.
	byte2 []uint8
	// by3 lists, for each hash of first three bytes (hash3), the codes
	// of the symbols of three bytes or more that start with bytes of
	// that hash, longest first: by3Codes[by3Start[h]:by3Start[h+1]].
	by3Start []uint16
	by3Codes []uint8
}

// ErrBadTable is wrapped by the error of a symbol table that does not
// parse.
var ErrBadTable = errors.New("bad symbol table")

// New returns the table of symbols (each 1 to 8 bytes, at most
// MaxSymbols of them, none twice).
func New(symbols [][]byte) (*Table, error) {
	if len(symbols) > MaxSymbols {
		return nil, fmt.Errorf("%w: %d symbols", ErrBadTable, len(symbols))
	}
	t := &Table{n: len(symbols)}
	for i := range t.byte1 {
		t.byte1[i] = Escape
	}
	seen := make(map[string]bool, len(symbols))
	for i, s := range symbols {
		if len(s) == 0 || len(s) > 8 || seen[string(s)] {
			return nil, fmt.Errorf("%w: symbol %d", ErrBadTable, i)
		}
		seen[string(s)] = true
		t.syms[i], t.lens[i] = load64(s), uint8(len(s))
		t.masks[i] = ^uint64(0) >> (64 - 8*len(s))
		if len(s) == 1 {
			t.byte1[s[0]] = uint8(i)
		}
	}
	// Two-byte symbols by their bytes; longer ones by the hash of their
	// first three, longest first.
	t.byte2 = make([]uint8, 1<<16)
	for i := range t.byte2 {
		t.byte2[i] = Escape
	}
	var long []int
	for i, s := range symbols {
		switch {
		case len(s) == 2:
			t.byte2[uint16(t.syms[i])] = uint8(i)
		case len(s) > 2:
			long = append(long, i)
		}
	}
	slices.SortFunc(long, func(a, b int) int {
		ha, hb := hash3(t.syms[a]), hash3(t.syms[b])
		if ha != hb {
			return int(ha) - int(hb)
		}
		return int(t.lens[b]) - int(t.lens[a])
	})
	t.by3Start = make([]uint16, hash3Size+1)
	t.by3Codes = make([]uint8, len(long))
	for i, c := range long {
		t.by3Codes[i] = uint8(c)
		t.by3Start[hash3(t.syms[c])+1]++
	}
	for h := 1; h < len(t.by3Start); h++ {
		t.by3Start[h] += t.by3Start[h-1]
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

// Symbols returns the table's symbols, in code order.
func (t *Table) Symbols() [][]byte {
	out := make([][]byte, t.n)
	for c := range out {
		out[c] = t.symbol(uint8(c))
	}
	return out
}

// symbol returns the bytes of code c.
func (t *Table) symbol(c uint8) []byte {
	return binary.LittleEndian.AppendUint64(nil, t.syms[c])[:t.lens[c]]
}

// next returns the code that encodes the longest symbol at the start of
// text (len(text) > 0) and the symbol's length; Escape and 1 when none
// does.
func (t *Table) next(text []byte) (uint8, int) {
	if len(text) >= 8 {
		// The common case: no symbol runs past the text's end.
		w := binary.LittleEndian.Uint64(text)
		h := hash3(w)
		for _, c := range t.by3Codes[t.by3Start[h]:t.by3Start[h+1]] {
			if w&t.masks[c] == t.syms[c] {
				return c, int(t.lens[c])
			}
		}
		if c := t.byte2[uint16(w)]; c != Escape {
			return c, 2
		}
	} else if len(text) >= 2 {
		w := load64(text)
		if len(text) >= 3 {
			h := hash3(w)
			for _, c := range t.by3Codes[t.by3Start[h]:t.by3Start[h+1]] {
				if l := int(t.lens[c]); l <= len(text) && w&t.masks[c] == t.syms[c] {
					return c, l
				}
			}
		}
		if c := t.byte2[uint16(w)]; c != Escape {
			return c, 2
		}
	}
	return t.byte1[text[0]], 1
}

// hash3Size is the number of hashes of three bytes (hash3).
const hash3Size = 1 << 10

// hash3 returns a hash of the first three bytes of w (little-endian),
// below hash3Size.
func hash3(w uint64) uint32 {
	return uint32(w&0xffffff) * 2654435761 >> 22
}

// Encode appends the codes of text to dst.
func (t *Table) Encode(dst, text []byte) []byte {
	for len(text) >= 8 {
		// The common case, next's first branch inlined: no symbol runs
		// past the text's end.
		w := binary.LittleEndian.Uint64(text)
		c, l := uint8(Escape), 0
		h := hash3(w)
		for _, cc := range t.by3Codes[t.by3Start[h]:t.by3Start[h+1]] {
			if w&t.masks[cc] == t.syms[cc] {
				c, l = cc, int(t.lens[cc])
				break
			}
		}
		if l == 0 {
			if c = t.byte2[uint16(w)]; c != Escape {
				l = 2
			} else {
				c, l = t.byte1[byte(w)], 1
			}
		}
		if c == Escape {
			dst = append(dst, Escape, byte(w))
		} else {
			dst = append(dst, c)
		}
		text = text[l:]
	}
	for len(text) > 0 {
		c, l := t.next(text)
		if c == Escape {
			dst = append(dst, Escape, text[0])
		} else {
			dst = append(dst, c)
		}
		text = text[l:]
	}
	return dst
}

// Decode returns the text of codes, in new memory (at most 8 bytes a
// code: damaged codes cannot make it allocate more).
func (t *Table) Decode(codes []byte) ([]byte, error) {
	n := 0
	for i := 0; i < len(codes); i++ {
		c := codes[i]
		switch {
		case c == Escape:
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
		if c == Escape {
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

// Marshal returns the table in its stored form: per symbol, its length
// and its bytes.
func (t *Table) Marshal() []byte {
	out := make([]byte, 0, 1+9*t.n)
	for c := range t.n {
		out = append(out, t.lens[c])
		out = append(out, t.symbol(uint8(c))...)
	}
	return out
}

// Parse returns the table of stored form b (see Marshal).
func Parse(b []byte) (*Table, error) {
	var symbols [][]byte
	for len(b) > 0 {
		l := int(b[0])
		if l < 1 || l > 8 || 1+l > len(b) {
			return nil, fmt.Errorf("%w: a symbol of %d bytes", ErrBadTable, l)
		}
		symbols = append(symbols, b[1:1+l])
		b = b[1+l:]
	}
	return New(symbols)
}

// rounds is how many rounds of compressing the sample and choosing
// symbols again training takes (FSST's own choice).
const rounds = 5

// Train returns the symbols of a table for texts like sample: in
// each round the sample is encoded with the table so far, and the new
// table takes the symbols, and the concatenations of two symbols that
// follow one another, that saved (or would save) the most bytes. Only
// symbols seen in at least minShared distinct texts of the sample are
// taken (a one-byte symbol is no piece of a text).
func Train(sample [][]byte, minShared int) [][]byte {
	const codes = 256 + 256 // a symbol's code, or 256+b for an escaped b
	type stat struct {
		count, texts, last int32
	}
	var symbols [][]byte
	t, _ := New(nil)
	for round := range rounds {
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
				if c == Escape {
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
			if len(b) > 1 && s.texts < int32(minShared) {
				continue
			}
			g := int64(s.count) * int64(len(b))
			if len(b) == 1 && round < rounds-1 {
				g *= 8
			}
			gains[string(b)] += g
		}
		for p, s := range pairs {
			if s.count == 0 || s.texts < int32(minShared) {
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
		for _, c := range cands[:min(len(cands), MaxSymbols)] {
			symbols = append(symbols, []byte(c.s))
		}
		t, _ = New(symbols)
	}
	return symbols
}

// DecodeLoose reads every byte of raw as a code of t, from its start to
// its end, leaving out codes t does not have, and returns what they
// decode to. Codes carry no alignment but after an escape, so the run of
// codes of a text anywhere in raw (in a page of a file, say) decodes to
// the text, but perhaps its first symbol: tests that search raw storage
// for texts kept compressed search this.
func (t *Table) DecodeLoose(raw []byte) []byte {
	out := make([]byte, 0, 2*len(raw))
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == Escape:
			if i+1 < len(raw) {
				i++
				out = append(out, raw[i])
			}
		case int(c) < t.n:
			out = append(out, t.symbol(c)...)
		}
	}
	return out
}
