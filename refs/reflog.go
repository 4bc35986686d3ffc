package refs

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/tractdag/tract/dag"
)

// Reflog actions written by tract's own operations. LogAll shows the action
// of the entry that orphaned a side chain.
const (
	ActionCommit   = "commit"
	ActionReset    = "reset"
	ActionPurify   = "purify"
	ActionCompress = "compress"
	ActionBranch   = "branch"
	ActionCheckout = "checkout"
	ActionImport   = "import"
	// ActionRetry moves a branch to the next attempt of a validated turn
	// that starts each retry afresh from its restore point.
	ActionRetry = "retry"
	// ActionSide ends a side chain (see tract's SideChain): its ref is
	// deleted, and the entry (Old the chain's tip, New zero) says why the
	// chain was built.
	ActionSide = "side"
	// ActionEscalation moves the ref of an escalation that waits in the
	// repository: recorded, answered, taken up by its turn (the ref is
	// deleted: New zero).
	ActionEscalation = "escalation"
	// ActionConflict records, in the Stranded reflog, a result that could
	// not be put on its branch because the branch moved meanwhile.
	ActionConflict = "conflict"
)

// Stranded is the name of the reflog that records results kept off their
// branch by a conflict: Old is the commit the operation built on, New the
// result it stored. It is a reflog without a ref, like git's logs of
// deleted refs: its entries keep the results listable and safe from gc
// until they expire.
const Stranded = "STRANDED"

// Entry is one ref move in a reflog.
type Entry struct {
	// Old is where the ref pointed before (zero for a new ref).
	Old dag.Hash
	// New is where it points after (zero for a deleted ref).
	New dag.Hash
	// Time is when the move happened.
	Time time.Time
	// Action is the operation that moved the ref ("commit", "purify", …).
	Action string
	// Message describes the move, e.g. "purify: hid 2 failed attempts".
	Message string
}

// Encode returns the stored form of a reflog entry:
//
//	offset  size  field
//	0       1     version tag, 0x01
//	1       32    old hash
//	33      32    new hash
//	65      8     time as Unix nanoseconds, big-endian signed int64
//	73      v     length of action, unsigned varint, then its bytes
//	.       v     length of message, unsigned varint, then its bytes
//
// Entries are stored under an 8-byte big-endian sequence number, so a reflog
// reads oldest first.
func (e Entry) Encode() []byte {
	b := make([]byte, 0, 1+2*dag.HashSize+8+2*binary.MaxVarintLen64+len(e.Action)+len(e.Message))
	b = append(b, 1)
	b = append(b, e.Old[:]...)
	b = append(b, e.New[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Time.UnixNano()))
	b = binary.AppendUvarint(b, uint64(len(e.Action)))
	b = append(b, e.Action...)
	b = binary.AppendUvarint(b, uint64(len(e.Message)))
	b = append(b, e.Message...)
	return b
}

// DecodeEntry parses a stored reflog entry. It rejects another version tag,
// truncated fields, non-minimal varints and trailing bytes, so an entry has
// exactly one encoding.
func DecodeEntry(b []byte) (Entry, error) {
	var e Entry
	if len(b) < 1+2*dag.HashSize+8 || b[0] != 1 {
		return e, fmt.Errorf("reflog entry: malformed (%d bytes)", len(b))
	}
	copy(e.Old[:], b[1:])
	copy(e.New[:], b[1+dag.HashSize:])
	e.Time = time.Unix(0, int64(binary.BigEndian.Uint64(b[1+2*dag.HashSize:]))).UTC()
	rest := b[1+2*dag.HashSize+8:]
	var err error
	if e.Action, rest, err = readString(rest); err != nil {
		return e, err
	}
	if e.Message, rest, err = readString(rest); err != nil {
		return e, err
	}
	if len(rest) != 0 {
		return e, fmt.Errorf("reflog entry: %d trailing bytes", len(rest))
	}
	return e, nil
}

func readString(b []byte) (string, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, fmt.Errorf("reflog entry: truncated field")
	}
	if k != len(binary.AppendUvarint(nil, n)) {
		return "", nil, fmt.Errorf("reflog entry: non-minimal length varint")
	}
	return string(b[k : k+int(n)]), b[k+int(n):], nil
}
