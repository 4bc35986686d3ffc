package store

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/refs"
)

// Refsets: refs published together with a pack (schema 5).
//
// bbolt keeps every page a write transaction dirties in memory until it
// commits, and a reflog is a nested bucket per ref: one transaction that
// creates 100,000 refs with their reflogs (an import of 100,000
// conversations) held about 220 MB. So a pack's refs are staged with it,
// a batch per transaction, and published with it in one move:
//
//	refstaging  8-byte pack id → nested bucket (the refs of an unpublished pack):
//	              "refs"   → nested: full ref name → refs.Ref.Encode
//	              "reflog" → nested: full ref name, 0x00, 8-byte big-endian
//	                         sequence → refs.Entry.Encode
//	refsets     the same, for refs published (PublishPack moves the bucket)
//
// A ref lives in one place: the refs bucket or one refset. Reads consult
// both (Ref, Refs, ReflogNames); a ref's reflog is its entries in the
// reflogs bucket, then its refset's, then the journal's. Any write that
// touches a ref held by a refset (SetRef, DeleteRef, AppendReflog,
// ReplaceReflog) first folds it: moves the ref and its entries to the
// refs and reflogs buckets, so that whatever it writes comes after them.
// MergePacks (and Compact) folds the rest, a batch of refs per
// transaction; each fold moves whole refs in one transaction, so a reader
// sees every ref throughout, wherever it is kept. An unpublished pack's staged refs are
// dropped with it.
var (
	bucketRefStaging = []byte("refstaging")
	bucketRefsets    = []byte("refsets")

	keyRefsetRefs   = []byte("refs")
	keyRefsetReflog = []byte("reflog")
)

// schemaRefsets is the schema of a file with a published refset: a tract
// that does not know them would not find their refs.
const schemaRefsets = 5

// foldBatch is how many refs one transaction of MergePacks folds: a
// reflog bucket each, about 2 KiB of dirty pages apiece.
const foldBatch = 2048

// StagePackRefs implements PackRefTx.
func (t *boltTx) StagePackRefs(id uint64, rs []refs.Ref, es []refs.Entry) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("stage refs of pack %d: %w", id, err)
	}
	if len(es) != len(rs) {
		return fmt.Errorf("stage refs of pack %d: %d refs and %d reflog entries", id, len(rs), len(es))
	}
	if _, err := t.stagingPack(id); err != nil {
		return err
	}
	staging, err := t.tx.CreateBucketIfNotExists(bucketRefStaging)
	if err != nil {
		return fmt.Errorf("stage refs of pack %d: %w", id, err)
	}
	set, err := staging.CreateBucketIfNotExists(packKey(id))
	if err != nil {
		return fmt.Errorf("stage refs of pack %d: %w", id, err)
	}
	rb, err := set.CreateBucketIfNotExists(keyRefsetRefs)
	if err != nil {
		return fmt.Errorf("stage refs of pack %d: %w", id, err)
	}
	lb, err := set.CreateBucketIfNotExists(keyRefsetReflog)
	if err != nil {
		return fmt.Errorf("stage refs of pack %d: %w", id, err)
	}
	for i, r := range rs {
		if r.Name == "" || r.IsSymbolic() {
			return fmt.Errorf("stage refs of pack %d: ref %q: only named refs to commits are staged", id, r.Name)
		}
		if err := fitsKey(r.Name + "\x00________"); err != nil {
			return err
		}
		if bytes.IndexByte([]byte(r.Name), 0) >= 0 {
			return fmt.Errorf("stage refs of pack %d: ref %q: %w", id, r.Name, refs.ErrInvalidName)
		}
		if rb.Get([]byte(r.Name)) != nil {
			return fmt.Errorf("stage refs of pack %d: ref %s is staged twice", id, r.Name)
		}
		if err := rb.Put([]byte(r.Name), r.Encode()); err != nil {
			return fmt.Errorf("stage refs of pack %d: %w", id, err)
		}
		if err := lb.Put(refsetReflogKey(r.Name, 1), es[i].Encode()); err != nil {
			return fmt.Errorf("stage refs of pack %d: %w", id, err)
		}
	}
	return nil
}

// refsetReflogKey is the key of entry seq of ref name's reflog in a
// refset.
func refsetReflogKey(name string, seq uint64) []byte {
	return append(append([]byte(name), 0), journalKey(seq)...)
}

// publishRefset publishes the refs staged with pack id, if any: moves
// them to refsets. The journal is checkpointed first, so that every
// reflog entry of theirs written before (a deleted ref's) is in the
// reflogs bucket, which reads come before a refset's.
func (t *boltTx) publishRefset(id uint64) error {
	staging := t.tx.Bucket(bucketRefStaging)
	if staging == nil || staging.Bucket(packKey(id)) == nil {
		return nil
	}
	if err := t.writeDirect(); err != nil {
		return fmt.Errorf("publish refs of pack %d: %w", id, err)
	}
	sets, err := t.tx.CreateBucketIfNotExists(bucketRefsets)
	if err != nil {
		return fmt.Errorf("publish refs of pack %d: %w", id, err)
	}
	if err := t.tx.MoveBucket(packKey(id), staging, sets); err != nil {
		return fmt.Errorf("publish refs of pack %d: %w", id, err)
	}
	t.noRefsets = false
	if err := raiseSchema(t.tx, schemaRefsets); err != nil {
		return fmt.Errorf("publish refs of pack %d: %w", id, err)
	}
	return nil
}

// dropStagedRefs drops the refs staged with pack id, if any.
func (t *boltTx) dropStagedRefs(id uint64) error {
	staging := t.tx.Bucket(bucketRefStaging)
	if staging == nil || staging.Bucket(packKey(id)) == nil {
		return nil
	}
	return staging.DeleteBucket(packKey(id))
}

// refsets returns the buckets of the published refsets (nil for none: a
// file without refsets pays one lookup).
func (t *boltTx) refsets() []*bolt.Bucket {
	if t.noRefsets {
		return nil
	}
	sets := t.tx.Bucket(bucketRefsets)
	if sets == nil {
		t.noRefsets = true
		return nil
	}
	var out []*bolt.Bucket
	_ = sets.ForEach(func(k, v []byte) error {
		if v == nil {
			if b := sets.Bucket(k); b != nil {
				out = append(out, b)
			}
		}
		return nil
	})
	return out
}

// refsetRef returns the encoded ref name held by a refset, nil if none.
func (t *boltTx) refsetRef(name string) []byte {
	for _, set := range t.refsets() {
		if rb := set.Bucket(keyRefsetRefs); rb != nil {
			if v := rb.Get([]byte(name)); v != nil {
				return v
			}
		}
	}
	return nil
}

// refsetRefs calls fn for each ref the refsets hold.
func (t *boltTx) refsetRefs(fn func(k, v []byte) error) error {
	for _, set := range t.refsets() {
		if rb := set.Bucket(keyRefsetRefs); rb != nil {
			if err := rb.ForEach(fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// refsetReflog returns the encoded entries of ref name's reflog that the
// refsets hold, oldest first.
func (t *boltTx) refsetReflog(name string) [][]byte {
	var out [][]byte
	prefix := append([]byte(name), 0)
	for _, set := range t.refsets() {
		lb := set.Bucket(keyRefsetReflog)
		if lb == nil {
			continue
		}
		c := lb.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) == len(prefix)+8 {
				out = append(out, v)
			}
		}
	}
	return out
}

// refsetReflogNames returns the refs with reflog entries in the refsets.
func (t *boltTx) refsetReflogNames() []string {
	var out []string
	for _, set := range t.refsets() {
		lb := set.Bucket(keyRefsetReflog)
		if lb == nil {
			continue
		}
		_ = lb.ForEach(func(k, v []byte) error {
			if v != nil && len(k) > 9 && k[len(k)-9] == 0 {
				if name := string(k[:len(k)-9]); len(out) == 0 || out[len(out)-1] != name {
					out = append(out, name)
				}
			}
			return nil
		})
	}
	return out
}

// fold moves ref name, and its reflog entries, from the refsets to the
// refs and reflogs buckets, before a write touches it.
func (t *boltTx) fold(name string) error {
	for _, set := range t.refsets() {
		if err := t.foldFrom(set, []byte(name)); err != nil {
			return fmt.Errorf("ref %s: %w", name, err)
		}
	}
	return nil
}

// foldFrom moves ref name and its reflog entries from refset set.
func (t *boltTx) foldFrom(set *bolt.Bucket, name []byte) error {
	if rb := set.Bucket(keyRefsetRefs); rb != nil {
		if v := rb.Get(name); v != nil {
			if err := t.bucket(bucketRefs).Put(clone(name), clone(v)); err != nil {
				return err
			}
			if err := rb.Delete(name); err != nil {
				return err
			}
		}
	}
	lb := set.Bucket(keyRefsetReflog)
	if lb == nil {
		return nil
	}
	prefix := append(clone(name), 0)
	var keys, values [][]byte
	c := lb.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) == len(prefix)+8 && v != nil {
			keys, values = append(keys, clone(k)), append(values, clone(v))
		}
	}
	for i, k := range keys {
		if err := appendNext(t.bucket(bucketReflogs), prefix[:len(prefix)-1], values[i]); err != nil {
			return err
		}
		if err := lb.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// foldSome folds up to n refs of the first refset, and drops refsets left
// empty; it returns whether any remain.
func (t *boltTx) foldSome(n int) (more bool, err error) {
	sets := t.tx.Bucket(bucketRefsets)
	if sets == nil {
		return false, nil
	}
	k, _ := sets.Cursor().First()
	if k == nil {
		return false, t.tx.DeleteBucket(bucketRefsets)
	}
	id := clone(k)
	set := sets.Bucket(id)
	if set == nil {
		return false, fmt.Errorf("refset %x is not a bucket: %w", id, ErrCorrupt)
	}
	var names [][]byte
	if rb := set.Bucket(keyRefsetRefs); rb != nil {
		c := rb.Cursor()
		for k, _ := c.First(); k != nil && len(names) < n; k, _ = c.Next() {
			names = append(names, clone(k))
		}
	}
	if lb := set.Bucket(keyRefsetReflog); lb != nil && len(names) < n {
		// Entries whose ref is gone (none, unless a copy brought them).
		c := lb.Cursor()
		for k, _ := c.First(); k != nil && len(names) < n; k, _ = c.Next() {
			if len(k) > 9 && k[len(k)-9] == 0 {
				if name := k[:len(k)-9]; len(names) == 0 || !bytes.Equal(names[len(names)-1], name) {
					names = append(names, clone(name))
				}
			}
		}
	}
	for _, name := range names {
		if err := t.foldFrom(set, name); err != nil {
			return false, fmt.Errorf("fold ref %s: %w", name, err)
		}
	}
	if len(names) < n {
		// Nothing left in this one (keys no fold takes are dropped).
		if err := sets.DeleteBucket(id); err != nil {
			return false, err
		}
		k, _ := sets.Cursor().First()
		if k == nil {
			return false, t.tx.DeleteBucket(bucketRefsets)
		}
	}
	return true, nil
}

// foldRefsets folds every refset into the refs and reflogs buckets, a
// batch of refs per transaction.
func (b *Bolt) foldRefsets(ctx context.Context) error {
	var any bool
	if err := b.View(ctx, func(tx Tx) error {
		any = tx.(*boltTx).tx.Bucket(bucketRefsets) != nil
		return nil
	}); err != nil || !any {
		return err
	}
	for more := true; more; {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := b.Update(ctx, func(tx Tx) error {
			var err error
			more, err = tx.(*boltTx).foldSome(foldBatch)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
