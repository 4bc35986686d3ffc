package dag

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/zeebo/blake3"
)

// HashSize is the length of a Hash in bytes.
const HashSize = 32

// ShortLen is the number of hex characters Short shows.
const ShortLen = 8

// MinPrefixLen is the shortest abbreviated hash a revision may use.
const MinPrefixLen = 4

// Hash is the BLAKE3-256 digest that names a blob or a commit.
type Hash [HashSize]byte

// Sum returns the BLAKE3-256 hash of data. It is the only function in tract
// that computes hashes: blobs hash their content, commits their canonical
// encoding.
func Sum(data []byte) Hash {
	return Hash(blake3.Sum256(data))
}

// ParseHash parses a full 64-character lowercase or uppercase hex hash.
// On error it returns the zero hash.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 2*HashSize {
		return Hash{}, fmt.Errorf("parse hash %q: want %d hex characters, got %d", s, 2*HashSize, len(s))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return Hash{}, fmt.Errorf("parse hash %q: %w", s, err)
	}
	return h, nil
}

// String returns the hash as 64 lowercase hex characters.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Short returns the first ShortLen hex characters of the hash.
func (h Hash) Short() string { return hex.EncodeToString(h[:ShortLen/2]) }

// IsZero reports whether h is the zero hash, which names nothing.
func (h Hash) IsZero() bool { return h == Hash{} }

// MarshalText encodes the hash as lowercase hex.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText decodes a full hex hash.
func (h *Hash) UnmarshalText(b []byte) error {
	p, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = p
	return nil
}

// IsHexPrefix reports whether s could be an abbreviated or full hash: at
// least MinPrefixLen and at most 64 hex characters.
func IsHexPrefix(s string) bool {
	if len(s) < MinPrefixLen || len(s) > 2*HashSize {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F')
	}) < 0
}
