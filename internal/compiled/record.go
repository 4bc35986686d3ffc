package compiled

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"unsafe"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// A record holds the messages compiled from a run of commits on a
// first-parent chain, stored under the run's last commit (see
// store.ContextTx). Its encoding:
//
//	version  byte (1)
//	prev     32 bytes: the last commit of the run before, which has a
//	         record of its own (zeros: the run starts at the root)
//	total    uvarint: the messages compiled from the root through the
//	         run's last commit
//	n        uvarint: the messages of this run, then n entries:
//	tag      byte: the role's code (dag.Role.Code), plus shapedTag when
//	         the message has a shape
//	text     uvarint length and the text; for a shaped message instead
//	         the 32-byte hash of its commit, compiled again on reading
//	check    4 bytes, big-endian: the CRC-32C of every byte before them
//
// The check catches a record damaged in the file (bbolt's pages carry no
// checksum): its messages would otherwise go to the model as they are.
//
// A record is a pure function of the commits it covers, which are
// immutable, so it never goes stale; it only goes when its commit does
// (gc) or when a longer record takes its run over (Save).
const recordVersion = 1

// shapedTag marks an entry whose message has a shape.
const shapedTag = 0x80

// maxRecord is the size up to which Save merges records: a record of
// more is not merged further, and a long run written at once is cut
// into records of about this size.
const maxRecord = 256 << 10

// errBadRecord reports a record that cannot be read: the chain is then
// compiled from its commits.
var errBadRecord = errors.New("bad compiled-context record")

// record is a decoded record.
type record struct {
	prev  dag.Hash
	total int
	msgs  []Message // a shaped entry holds only its commit's hash
}

// header decodes a record's prev, total and message count.
func header(b []byte) (prev dag.Hash, total, n int, rest []byte, err error) {
	if len(b) < 1+dag.HashSize || b[0] != recordVersion {
		return prev, 0, 0, nil, errBadRecord
	}
	prev = dag.Hash(b[1 : 1+dag.HashSize])
	rest = b[1+dag.HashSize:]
	var vs [2]uint64
	for i := range vs {
		v, k := binary.Uvarint(rest)
		if k <= 0 || v > 1<<31-1 {
			return prev, 0, 0, nil, errBadRecord
		}
		vs[i], rest = v, rest[k:]
	}
	if vs[1] > vs[0] {
		return prev, 0, 0, nil, errBadRecord
	}
	return prev, int(vs[0]), int(vs[1]), rest, nil
}

// castagnoli returns the CRC-32C table of the records' check, made on
// first use: making it at start-up cost every command of the CLI 0.15 ms,
// most of them never reading a record.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// checked is header of a record whose check is right.
func checked(b []byte) (prev dag.Hash, total, n int, rest []byte, err error) {
	if len(b) < 4 || crc32.Checksum(b[:len(b)-4], castagnoli()) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return prev, 0, 0, nil, errBadRecord
	}
	return header(b[:len(b)-4])
}

// decode decodes b, which the caller hands over: the texts are strings
// over b's bytes.
func decode(b []byte) (record, error) {
	if len(b) < 4 || crc32.Checksum(b[:len(b)-4], castagnoli()) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return record{}, errBadRecord
	}
	b = b[:len(b)-4]
	prev, total, n, rest, err := header(b)
	if err != nil {
		return record{}, err
	}
	if prev.IsZero() != (total == n) || n > len(rest) {
		return record{}, errBadRecord
	}
	r := record{prev: prev, total: total, msgs: make([]Message, n)}
	for i := range r.msgs {
		if len(rest) == 0 {
			return record{}, errBadRecord
		}
		tag := rest[0]
		code := tag &^ shapedTag
		if int(code) >= numRoles {
			return record{}, errBadRecord
		}
		rest = rest[1:]
		if tag&shapedTag != 0 {
			if len(rest) < dag.HashSize {
				return record{}, errBadRecord
			}
			r.msgs[i] = Message{shaped: &shaped{commit: dag.Hash(rest[:dag.HashSize])}, role: code}
			rest = rest[dag.HashSize:]
			continue
		}
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			return record{}, errBadRecord
		}
		text := rest[k : k+int(l)]
		r.msgs[i] = Message{content: unsafe.String(unsafe.SliceData(text), len(text)), role: code}
		rest = rest[k+int(l):]
	}
	if len(rest) != 0 {
		return record{}, errBadRecord
	}
	return r, nil
}

// numRoles is the number of role codes.
var numRoles = func() int {
	n := 0
	for _, r := range []dag.Role{dag.RoleSystem, dag.RoleUser, dag.RoleAssistant, dag.RoleTool} {
		if c, ok := r.Code(); ok {
			n = max(n, int(c)+1)
		}
	}
	return n
}()

// size is the bytes m takes in a record.
func (m Message) size() int {
	if m.shaped != nil {
		return 1 + dag.HashSize
	}
	return 1 + uvarintLen(len(m.content)) + len(m.content)
}

func uvarintLen(v int) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// encode returns the record of msgs, the last of the total messages
// compiled through its commit, after prev's.
func encode(prev dag.Hash, total int, msgs []Message) []byte {
	size := 1 + dag.HashSize + 2*binary.MaxVarintLen32 + 4
	for _, m := range msgs {
		size += m.size()
	}
	b := make([]byte, 0, size)
	b = append(append(b, recordVersion), prev[:]...)
	b = binary.AppendUvarint(b, uint64(total))
	b = binary.AppendUvarint(b, uint64(len(msgs)))
	for _, m := range msgs {
		if m.shaped != nil {
			b = append(append(b, m.role|shapedTag), m.shaped.commit[:]...)
			continue
		}
		b = binary.AppendUvarint(append(b, m.role), uint64(len(m.content)))
		b = append(b, m.content...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

// records reads records for a walk: through ct, or, when ct reads
// chains of records (store.ContextChainReader), a chain at a time, the
// records before the one asked for kept for the walk's next steps.
type records struct {
	ct    store.ContextTx
	ahead map[dag.Hash][]byte
}

// get returns the record of h, nil when it has none.
func (rs *records) get(h dag.Hash) ([]byte, error) {
	if rec, ok := rs.ahead[h]; ok {
		delete(rs.ahead, h)
		return rec, nil
	}
	cr, ok := rs.ct.(store.ContextChainReader)
	if !ok {
		return rs.ct.Context(h)
	}
	hs, recs, err := cr.ContextChain(h, 1024)
	if err != nil || len(hs) == 0 || hs[0] != h {
		return nil, err
	}
	if rs.ahead == nil {
		rs.ahead = make(map[dag.Hash][]byte, len(hs))
	}
	for i, k := range hs[1:] {
		rs.ahead[k] = recs[i+1]
	}
	return recs[0], nil
}

// read returns the record of commit h with its shaped messages compiled,
// ok false when h has none or an unreadable one.
func read(tx store.Tx, rs *records, h dag.Hash) (r record, ok bool, err error) {
	raw, err := rs.get(h)
	if err != nil || raw == nil {
		return record{}, false, err
	}
	if r, err = decode(raw); err != nil {
		return record{}, false, nil
	}
	for i, m := range r.msgs {
		if m.shaped == nil {
			continue
		}
		c, err := tx.Commit(m.shaped.commit)
		if err != nil {
			return record{}, false, fmt.Errorf("compiled context of %s: %w", h.Short(), err)
		}
		one, sent, err := One(tx, m.shaped.commit, c, false)
		if err != nil {
			return record{}, false, err
		}
		if !sent || one.role != m.role {
			return record{}, false, nil
		}
		r.msgs[i] = one
	}
	return r, true, nil
}
