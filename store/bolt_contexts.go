package store

import (
	"fmt"

	"github.com/tractdag/tract/dag"
)

// bucketContexts holds the compiled-context records (see ContextTx): a
// 32-byte commit hash → the record of the run of commits ending there.
// It is a top-level bucket of its own, written directly (not through
// the journal or packs): only validated turns write it, a few records a
// turn. Compact copies it; Copy and Salvage leave it out (it is derived).
// A record is kept in a stored form, as a text is (see blobcodec.go):
// it holds the texts of its run.
var bucketContexts = []byte("contexts")

// schemaContexts is the schema of a file with a compiled-context record:
// a tract that does not know them would delete commits without their
// records, and so leave deleted texts in the file.
const schemaContexts = 6

var _ ContextTx = (*boltTx)(nil)

func (t *boltTx) Context(h dag.Hash) ([]byte, error) {
	b := t.tx.Bucket(bucketContexts)
	if b == nil {
		return nil, nil
	}
	v := b.Get(h[:])
	if v == nil {
		return nil, nil
	}
	rec, err := t.text(v)
	if err != nil {
		// A damaged record is handed on as it is: its checksum fails,
		// and its reader passes it by.
		return clone(v), nil
	}
	return clone(rec), nil
}

func (t *boltTx) HasContexts(hs []dag.Hash) ([]bool, error) {
	has := make([]bool, len(hs))
	if b := t.tx.Bucket(bucketContexts); b != nil {
		for i, h := range hs {
			has[i] = b.Get(h[:]) != nil
		}
	}
	return has, nil
}

func (t *boltTx) PutContext(h dag.Hash, rec []byte, replaced []dag.Hash) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("put compiled context %s: %w", h.Short(), err)
	}
	b := t.tx.Bucket(bucketContexts)
	if b == nil {
		var err error
		if b, err = t.tx.CreateBucket(bucketContexts); err == nil {
			err = raiseSchema(t.tx, schemaContexts)
		}
		if err != nil {
			return fmt.Errorf("put compiled context %s: %w", h.Short(), err)
		}
	}
	for _, r := range replaced {
		if err := b.Delete(clone(r[:])); err != nil {
			return fmt.Errorf("replace compiled context %s: %w", r.Short(), err)
		}
	}
	v, err := t.stored(rec, false)
	if err != nil {
		return fmt.Errorf("put compiled context %s: %w", h.Short(), err)
	}
	if err := b.Put(clone(h[:]), v); err != nil {
		return fmt.Errorf("put compiled context %s: %w", h.Short(), err)
	}
	return nil
}

func (t *boltTx) DeleteContext(h dag.Hash) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("delete compiled context %s: %w", h.Short(), err)
	}
	b := t.tx.Bucket(bucketContexts)
	if b == nil || b.Get(h[:]) == nil {
		return nil
	}
	t.erased = true
	if err := b.Delete(h[:]); err != nil {
		return fmt.Errorf("delete compiled context %s: %w", h.Short(), err)
	}
	return nil
}
