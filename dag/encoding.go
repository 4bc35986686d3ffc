package dag

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// EncodingVersion is the version tag that starts every commit encoding.
const EncodingVersion = 1

// Encode returns the canonical encoding of c, version 1:
//
//	offset  size  field
//	0       1     version tag, 0x01
//	1       v     number of parents, unsigned varint
//	.       32*n  parent hashes, in order
//	.       v     length of kind, unsigned varint, then the kind's bytes
//	.       v     length of role, unsigned varint, then the role's bytes
//	.       32    blob hash
//	.       v     length of metadata, unsigned varint, then the canonical JSON
//	              (0 when there is no metadata)
//	.       8     time as Unix nanoseconds (UTC), big-endian signed int64
//
// Varints are encoding/binary's unsigned varints in their shortest form. The
// hash of a commit is Sum(Encode(c)). Encode returns an error for an invalid
// kind or role, for metadata that is not canonical and for a time that Unix
// nanoseconds cannot hold (before 1678 or after 2262, including the zero
// time); it never fixes input silently.
func Encode(c *Commit) ([]byte, error) {
	if !timeEncodable(c.Time) {
		return nil, fmt.Errorf("encode commit: time %s is outside the range of Unix nanoseconds (years 1678 to 2262); is the clock set?", c.Time.UTC().Format(time.RFC3339Nano))
	}
	if !c.Kind.Valid() {
		return nil, fmt.Errorf("encode commit: invalid kind %q", c.Kind)
	}
	if !c.Role.Valid() {
		return nil, fmt.Errorf("encode commit: invalid role %q", c.Role)
	}
	if len(c.Meta) > 0 {
		canon, err := CanonicalMeta(c.Meta)
		if err != nil {
			return nil, fmt.Errorf("encode commit: %w", err)
		}
		if !bytes.Equal(canon, c.Meta) {
			return nil, fmt.Errorf("encode commit: metadata is not canonical JSON (use CanonicalMeta)")
		}
	}
	n := 1 + binary.MaxVarintLen64*4 + HashSize*(len(c.Parents)+1) + len(c.Kind) + len(c.Role) + len(c.Meta) + 8
	b := make([]byte, 0, n)
	b = append(b, EncodingVersion)
	b = binary.AppendUvarint(b, uint64(len(c.Parents)))
	for _, p := range c.Parents {
		b = append(b, p[:]...)
	}
	b = appendBytes(b, []byte(c.Kind))
	b = appendBytes(b, []byte(c.Role))
	b = append(b, c.Blob[:]...)
	b = appendBytes(b, c.Meta)
	b = binary.BigEndian.AppendUint64(b, uint64(c.Time.UnixNano()))
	return b, nil
}

// Bounds of the times an int64 of Unix nanoseconds can hold.
var (
	minEncodableTime = time.Unix(0, math.MinInt64)
	maxEncodableTime = time.Unix(0, math.MaxInt64)
)

func timeEncodable(t time.Time) bool {
	return !t.Before(minEncodableTime) && !t.After(maxEncodableTime)
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// Hash returns the hash of c's canonical encoding.
func (c *Commit) Hash() (Hash, error) {
	b, err := Encode(c)
	if err != nil {
		return Hash{}, err
	}
	return Sum(b), nil
}

// Decode parses a canonical commit encoding. It rejects unknown versions,
// truncated input, non-minimal varints, invalid kinds or roles and trailing
// bytes with an error wrapping ErrBadEncoding. It does not check that the
// metadata is canonical JSON; Verify does. The returned commit does not
// alias b.
func Decode(b []byte) (*Commit, error) {
	d := decoder{b: b}
	if v := d.byte(); d.err == nil && v != EncodingVersion {
		return nil, fmt.Errorf("%w: unknown version %d", ErrBadEncoding, v)
	}
	c := &Commit{}
	n := d.uvarint()
	if d.err == nil && n > uint64(len(b))/HashSize {
		return nil, fmt.Errorf("%w: %d parents cannot fit", ErrBadEncoding, n)
	}
	if n > 0 {
		c.Parents = make([]Hash, n)
		for i := range c.Parents {
			d.hash(&c.Parents[i])
		}
	}
	c.Kind = internKind(d.bytes())
	c.Role = internRole(d.bytes())
	d.hash(&c.Blob)
	if meta := d.bytes(); len(meta) > 0 {
		c.Meta = bytes.Clone(meta)
	}
	ns := d.uint64()
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrBadEncoding, len(d.b))
	}
	c.Time = time.Unix(0, int64(ns)).UTC()
	if !c.Kind.Valid() || !c.Role.Valid() {
		return nil, fmt.Errorf("%w: invalid kind %q or role %q", ErrBadEncoding, c.Kind, c.Role)
	}
	return c, nil
}

// Verify checks what Decode leaves out for speed: that the metadata is
// canonical JSON. Fsck calls it on every commit.
func (c *Commit) Verify() error {
	if len(c.Meta) > 0 {
		canon, err := CanonicalMeta(c.Meta)
		if err != nil || !bytes.Equal(canon, c.Meta) {
			return fmt.Errorf("%w: metadata is not canonical JSON", ErrBadEncoding)
		}
	}
	return nil
}

// decoder reads fields in order and remembers the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated or malformed %s", ErrBadEncoding, what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail("version")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || n != uvarintLen(v) {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail("length-prefixed field")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) hash(h *Hash) {
	if d.err != nil || len(d.b) < HashSize {
		d.fail("hash")
		return
	}
	copy(h[:], d.b)
	d.b = d.b[HashSize:]
}

func (d *decoder) uint64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.fail("time")
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// internKind and internRole return the constant for a known name without
// allocating (Decode runs for every commit a walk touches).
func internKind(b []byte) Kind {
	switch string(b) {
	case string(KindMessage):
		return KindMessage
	case string(KindSteering):
		return KindSteering
	case string(KindSummary):
		return KindSummary
	case string(KindNote):
		return KindNote
	case string(KindError):
		return KindError
	}
	return Kind(b)
}

func internRole(b []byte) Role {
	switch string(b) {
	case string(RoleSystem):
		return RoleSystem
	case string(RoleUser):
		return RoleUser
	case string(RoleAssistant):
		return RoleAssistant
	case string(RoleTool):
		return RoleTool
	}
	return Role(b)
}

// Header is the part of a commit that walks and Compile need: its first
// parent, kind, role and blob.
type Header struct {
	// Parent is the first parent (zero for a root commit).
	Parent Hash
	Kind   Kind
	Role   Role
	Blob   Hash
	// Shaped is set when the metadata may hold a message shape: when it
	// mentions the key ShapeKey anywhere. A commit whose metadata has the
	// key at the top level always has it set; others rarely do.
	Shaped bool
}

// DecodeParents calls fn with each parent a commit encoding names, in
// order, without decoding the rest or allocating: for walks that need
// only the shape of a history.
func DecodeParents(b []byte, fn func(Hash)) error {
	d := decoder{b: b}
	if v := d.byte(); d.err == nil && v != EncodingVersion {
		return fmt.Errorf("%w: unknown version %d", ErrBadEncoding, v)
	}
	n := d.uvarint()
	if d.err == nil && n > uint64(len(b))/HashSize {
		return fmt.Errorf("%w: %d parents cannot fit", ErrBadEncoding, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		var p Hash
		if d.hash(&p); d.err == nil {
			fn(p)
		}
	}
	return d.err
}

// DecodeHeader reads a commit encoding's header without allocating (kinds
// and roles are the package's constants). It checks less than Decode: the
// fields after the blob are not read.
func DecodeHeader(b []byte) (Header, error) {
	var hd Header
	d := decoder{b: b}
	if v := d.byte(); d.err == nil && v != EncodingVersion {
		return hd, fmt.Errorf("%w: unknown version %d", ErrBadEncoding, v)
	}
	n := d.uvarint()
	if d.err == nil && n > uint64(len(b))/HashSize {
		return hd, fmt.Errorf("%w: %d parents cannot fit", ErrBadEncoding, n)
	}
	for i := uint64(0); i < n; i++ {
		var p Hash
		d.hash(&p)
		if i == 0 {
			hd.Parent = p
		}
	}
	hd.Kind = internKind(d.bytes())
	hd.Role = internRole(d.bytes())
	d.hash(&hd.Blob)
	if d.err != nil {
		return Header{}, d.err
	}
	if meta := (&decoder{b: d.b}).bytes(); len(meta) > 0 {
		hd.Shaped = MayHoldShape(meta)
	}
	if !hd.Kind.Valid() || !hd.Role.Valid() {
		return Header{}, fmt.Errorf("%w: invalid kind %q or role %q", ErrBadEncoding, hd.Kind, hd.Role)
	}
	return hd, nil
}
