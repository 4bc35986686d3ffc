package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/tractdag/tract/dag"
)

// A repository made by Salvage from a damaged file keeps every commit
// whose own bytes verify, even one whose parent or text was lost: a
// commit is content-addressed, so it cannot be rewritten to leave the
// lost parent out. The salvage record says which parents and texts were
// lost, so that the rest of tract can tell a commit whose history was
// lost in a salvage (a boundary: the walks stop there, fsck counts it)
// from one whose parent went missing since (damage, which fsck reports).
// A bbolt file keeps the record in its meta bucket under keySalvage, as
// JSON.
var keySalvage = []byte("salvage")

// SalvageRecord is what a salvaged repository keeps of what its salvage
// lost.
type SalvageRecord struct {
	// Time is when the salvage ran.
	Time time.Time `json:"time"`
	// LostCommits are the commits that salvaged commits name as a parent
	// but that were not recovered, sorted: each child is the root of the
	// chain that survived above it.
	LostCommits []dag.Hash `json:"lost_commits"`
	// LostBlobs are the texts of salvaged commits that were not
	// recovered, sorted.
	LostBlobs []dag.Hash `json:"lost_blobs"`
}

// SalvageRecorder is implemented by transactions that keep a salvage
// record (the bbolt store's).
type SalvageRecorder interface {
	// SalvageRecord returns the repository's salvage record, or nil when
	// it was not salvaged with losses.
	SalvageRecord() (*SalvageRecord, error)
	// SetSalvageRecord stores r as the repository's salvage record.
	SetSalvageRecord(r *SalvageRecord) error
}

var _ SalvageRecorder = (*boltTx)(nil)

// SalvageRecord implements SalvageRecorder.
func (t *boltTx) SalvageRecord() (*SalvageRecord, error) {
	m := t.tx.Bucket(bucketMeta)
	if m == nil {
		return nil, nil
	}
	v := m.Get(keySalvage)
	if v == nil {
		return nil, nil
	}
	r := &SalvageRecord{}
	if err := json.Unmarshal(v, r); err != nil {
		return nil, fmt.Errorf("salvage record: %w: %w", ErrCorrupt, err)
	}
	return r, nil
}

// SetSalvageRecord implements SalvageRecorder.
func (t *boltTx) SetSalvageRecord(r *SalvageRecord) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("salvage record: %w", err)
	}
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return t.tx.Bucket(bucketMeta).Put(keySalvage, v)
}

// lostHistory is a transaction's view of its salvage record: what the
// walks treat as the end of a chain, and which texts are known lost.
type lostHistory struct {
	commits []dag.Hash // sorted
	blobs   []dag.Hash // sorted
}

// lostOf returns the salvage record of tx as a lostHistory: empty when
// tx keeps none, or when its record cannot be read (fsck reports that).
func lostOf(tx any) lostHistory {
	sr, ok := tx.(SalvageRecorder)
	if !ok {
		return lostHistory{}
	}
	r, err := sr.SalvageRecord()
	if err != nil || r == nil {
		return lostHistory{}
	}
	return lostHistory{commits: r.LostCommits, blobs: r.LostBlobs}
}

func hashCompare(a, b dag.Hash) int { return bytes.Compare(a[:], b[:]) }

// commit reports whether h is a commit the salvage lost.
func (l lostHistory) commit(h dag.Hash) bool {
	_, ok := slices.BinarySearchFunc(l.commits, h, hashCompare)
	return ok
}

// blob reports whether h is a text the salvage lost.
func (l lostHistory) blob(h dag.Hash) bool {
	_, ok := slices.BinarySearchFunc(l.blobs, h, hashCompare)
	return ok
}

// LostCommit reports whether h is a commit that tx's repository lost in
// a salvage (see SalvageRecord): a chain whose next parent is h ends
// there, its history lost.
func LostCommit(tx ObjectTx, h dag.Hash) bool { return lostOf(tx).commit(h) }

// LostBlob reports whether h is a text that tx's repository lost in a
// salvage (see SalvageRecord).
func LostBlob(tx ObjectTx, h dag.Hash) bool { return lostOf(tx).blob(h) }

// LostText is the text that stands for a commit's text lost in a salvage
// wherever tract shows or compiles it.
func LostText(blob dag.Hash) string {
	return fmt.Sprintf("[text lost: blob %s was not recovered when this repository was salvaged]", blob.Short())
}

// endsAtLoss reports whether err, from reading commit h of a chain, means
// that the chain ends there because a salvage lost h.
func endsAtLoss(tx ObjectTx, err error, h dag.Hash) bool {
	return errors.Is(err, ErrNotFound) && LostCommit(tx, h)
}

// endLostChain zeroes the parent of the last of links, a page of a chain
// that filled up before its next commit was read, when a salvage lost
// that commit: every link whose parent was lost reads as a root, wherever
// the pages of the walk end.
func endLostChain(tx ObjectTx, links []ChainLink) {
	if len(links) == 0 {
		return
	}
	last := &links[len(links)-1].Header
	if !last.Parent.IsZero() && LostCommit(tx, last.Parent) {
		last.Parent = dag.Hash{}
	}
}

// CommitText returns the text of c: its blob, or LostText when salvage
// lost it.
func CommitText(tx Tx, c *dag.Commit) (string, error) {
	b, err := tx.Blob(c.Blob)
	if errors.Is(err, ErrNotFound) && LostBlob(tx, c.Blob) {
		return LostText(c.Blob), nil
	}
	if err != nil || len(b) == 0 {
		return "", err
	}
	return unsafe.String(&b[0], len(b)), nil // Blob's copy is the caller's
}
