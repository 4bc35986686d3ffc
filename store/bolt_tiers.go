package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
)

// Tiers of packs. A batch of objects written as a pack of its own
// (WritePack) costs the pages it fills, not a page per object, but every
// pack is one more place a lookup tries. So packs are merged as they come,
// the way a log-structured merge tree keeps its runs few: a pack's tier is
// the logarithm of its entry count to the base fanIn, and whenever fanIn
// published packs share a tier they become one pack of the next. Each
// object is then rewritten once per tier it climbs (three or four times
// between a batch of a thousand messages and the largest merge), and a
// repository holds at most fanIn-1 packs per tier below max.
//
// Merges of up to inline entries run in the transaction that wrote the
// pack. Larger ones would hold too many pages in memory at once for one
// bbolt transaction: Bolt.MergePacks runs them as a merge in progress, an
// unpublished pack filled inline entries per transaction and published,
// in place of the packs it merges, by one last transaction. Packs past max
// entries are left as they are; Bolt.Compact merges every pack into the
// main buckets.
type packPolicy struct {
	fanIn       int // a power of two
	inline, max int64
}

// defaultPackPolicy rewrites each object about three times on its way from
// a pack of 3,000 entries (a CommitMany of 1,000 messages) to one of
// 2,000,000, and keeps a merge's work in one transaction (an inline merge,
// or a step of a larger one) to 1,024 entries, a millisecond or two: every
// other writer of the file waits for that transaction (a merge of eight
// journal checkpoints, 15,000 entries, run inline held them 15–60 ms; steps
// of 4,096 entries about 6 ms).
func defaultPackPolicy() packPolicy { return packPolicy{fanIn: 8, inline: 1 << 10, max: 1 << 22} }

// keyPackMerging marks an unpublished pack as a merge in progress; its
// value is the 8-byte big-endian ids of the published packs it merges.
var keyPackMerging = []byte("merging")

var _ PackWriter = (*boltTx)(nil)

// WritePack stores entries as a new published pack, then merges packs of
// one tier while any tier holds fanIn of them and their merge fits one
// transaction (inline).
func (t *boltTx) WritePack(now time.Time, entries []PackEntry) error {
	if err := t.writable(); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if t.indexing() {
		for _, e := range entries {
			if e.Kind == PackCommit && t.getCommit(e.Hash) == nil {
				t.noteAdded(e.Hash)
			}
		}
	}
	entries, err := t.storedEntries(entries)
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	return t.writePack(now, entries)
}

// writePack is WritePack of objects the word index has seen already
// (the journal's, at its checkpoint).
func (t *boltTx) writePack(now time.Time, entries []PackEntry) error {
	pb, id, err := t.newPack(bucketPacks, now)
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if err := appendToPack(pb, id, now, entries); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	f := newPackFilter(int64(len(entries)))
	for _, e := range entries {
		f.add(e.Hash[:])
	}
	if err := pb.Put(keyPackFilter, f); err != nil {
		return fmt.Errorf("write pack %d: %w", id, err)
	}
	// A tract that does not know packs would not find these objects.
	if err := raiseSchema(t.tx, schemaPacks); err != nil {
		return fmt.Errorf("write pack %d: %w", id, err)
	}
	t.all = nil
	return t.mergeTiers(now)
}

// packStat is what the merge policy needs of a published pack.
type packStat struct {
	id      uint64
	entries int64
}

// tier is the tier of a pack of n entries: its logarithm to the base
// fanIn.
func (p packPolicy) tier(n int64) int {
	if n < 1 {
		return 0
	}
	return (bits.Len64(uint64(n)) - 1) / bits.TrailingZeros(uint(p.fanIn))
}

// group returns the packs to merge next: the fanIn oldest of the lowest
// tier that holds that many and whose merge stays within limit entries;
// nil when there is none.
func (p packPolicy) group(packs []packStat, limit int64) []packStat {
	byTier := map[int][]packStat{}
	for _, s := range packs {
		byTier[p.tier(s.entries)] = append(byTier[p.tier(s.entries)], s)
	}
	tiers := make([]int, 0, len(byTier))
	for t := range byTier {
		tiers = append(tiers, t)
	}
	slices.Sort(tiers)
	for _, t := range tiers {
		group := byTier[t]
		if len(group) < p.fanIn {
			continue
		}
		slices.SortFunc(group, func(a, b packStat) int { return cmp.Compare(a.id, b.id) })
		group = group[:p.fanIn]
		if groupEntries(group) <= limit {
			return group
		}
	}
	return nil
}

// publishedPackStats lists the published packs with their entry counts,
// leaving out any whose info does not decode: a damaged pack is read as
// it is, never merged, and writes go on (Fsck reports it).
func (t *boltTx) publishedPackStats() ([]packStat, error) {
	var out []packStat
	err := t.eachPublishedPack(func(id uint64, info PackInfo, err error) error {
		if err == nil {
			out = append(out, packStat{id: id, entries: info.Entries})
		}
		return nil
	})
	return out, err
}

// eachPublishedPack calls fn with the id and info of every published pack,
// or the error that decoding them gave, until fn returns an error.
func (t *boltTx) eachPublishedPack(fn func(id uint64, info PackInfo, err error) error) error {
	pb := t.tx.Bucket(bucketPacks)
	if pb == nil {
		return nil
	}
	return pb.ForEachBucket(func(k []byte) error {
		if len(k) != 8 {
			return fn(0, PackInfo{}, fmt.Errorf("pack key of %d bytes: %w", len(k), dag.ErrBadEncoding))
		}
		id := binary.BigEndian.Uint64(k)
		info, err := decodePackInfo(id, pb.Bucket(k).Get(keyPackInfo))
		return fn(id, info, err)
	})
}

// mergeTiers merges published packs, a group of one tier at a time, for as
// long as the policy finds one that fits this transaction.
func (t *boltTx) mergeTiers(now time.Time) error {
	for {
		packs, err := t.publishedPackStats()
		if err != nil {
			return fmt.Errorf("merge packs: %w", err)
		}
		group := t.policy.group(packs, t.policy.inline)
		if group == nil {
			return nil
		}
		if err := t.mergePacks(now, group); err != nil {
			return err
		}
	}
}

// mergePacks writes the objects of the published packs in group into one
// new published pack, in key order and each key once, and deletes the
// packs of group.
func (t *boltTx) mergePacks(now time.Time, group []packStat) error {
	dst, id, err := t.newPack(bucketPacks, now)
	if err != nil {
		return fmt.Errorf("merge packs: %w", err)
	}
	var entries int64
	f := newPackFilter(groupEntries(group))
	for _, name := range [][]byte{bucketBlobs, bucketCommits} {
		cur, ok := t.groupCursor(group, name)
		if !ok {
			return fmt.Errorf("merge packs: a pack of %v is missing its %s", group, name)
		}
		_, n, err := copyMerged(dst.Bucket(name), cur, nil, -1, f)
		if err != nil {
			return fmt.Errorf("merge packs into %d: %w", id, err)
		}
		entries += n
	}
	return t.replaceGroup(dst, id, group, now, entries, f)
}

// groupEntries is the number of entries of the packs of group together.
func groupEntries(group []packStat) int64 {
	var n int64
	for _, s := range group {
		n += s.entries
	}
	return n
}

// copyMerged puts into dst, in key order, the entries of cur after key
// after (from the first when after is nil), at most limit of them
// (negative: no limit), and adds their keys to f. It returns the last key
// it put (nil when it put none or cur has nothing left after it) and how
// many it put.
func copyMerged(dst *bolt.Bucket, cur *mergedCursor, after []byte, limit int64, f packFilter) (last []byte, n int64, err error) {
	dst.FillPercent = 1.0 // appended in order: nothing is inserted before them
	k, v := cur.First()
	if after != nil {
		if k, v = cur.Seek(after); k != nil && bytes.Equal(k, after) {
			k, v = cur.Next()
		}
	}
	for ; k != nil && n != limit; n++ {
		if err := dst.Put(k, v); err != nil {
			return nil, n, err
		}
		f.add(k)
		last = k
		k, v = cur.Next()
	}
	if k == nil {
		last = nil // nothing left
	}
	return last, n, nil
}

// replaceGroup records in pack dst (id, now in the packs bucket) its
// entry count and filter f and drops the published packs of group it was
// merged from.
func (t *boltTx) replaceGroup(dst *bolt.Bucket, id uint64, group []packStat, now time.Time, entries int64, f packFilter) error {
	if err := dst.Put(keyPackInfo, encodePackInfo(PackInfo{ID: id, Updated: now, Entries: entries})); err != nil {
		return fmt.Errorf("merge packs into %d: %w", id, err)
	}
	if err := dst.Put(keyPackFilter, f); err != nil {
		return fmt.Errorf("merge packs into %d: %w", id, err)
	}
	packs := t.tx.Bucket(bucketPacks)
	for _, p := range group {
		if err := packs.DeleteBucket(packKey(p.id)); err != nil {
			return fmt.Errorf("merge packs into %d: drop pack %d: %w", id, p.id, err)
		}
	}
	t.all = nil
	return nil
}

var _ PackMerger = (*Bolt)(nil)

// MergePacks runs the merges of published packs that were too large for
// the transaction that wrote the last of them, until every tier holds
// fewer than fanIn packs or a merge would pass max entries. Each merge
// copies inline entries per transaction into an unpublished pack, so other
// writers go on between them, and its last transaction publishes it and
// drops the packs it merged. A merge gives up (and drops its copy) when
// another process merged or compacted those packs first, or deleted
// objects from them: an object deleted (erased) from a source pack must
// not come back through the copy. The copy is dropped in the transaction
// that deletes, so a merge in progress never keeps an erased text.
func (b *Bolt) MergePacks(ctx context.Context) error { return b.mergePacks(ctx, false) }

// mergePacks is MergePacks; with yield, each of its transactions waits
// first for the handle's other writes to pause (see yieldToWrites), as
// the merges run in the background after a checkpoint do.
func (b *Bolt) mergePacks(ctx context.Context, yield bool) error {
	pause := func() {
		if yield {
			b.yieldToWrites(ctx)
		}
	}
	// Refs published with a pack move to the refs bucket first (see
	// bolt_refsets.go).
	pause()
	if err := b.foldRefsets(ctx); err != nil {
		return err
	}
	for {
		pause()
		m, err := b.startMerge(ctx)
		if err != nil || m == nil {
			return err
		}
		drop := func() error {
			return b.Update(context.WithoutCancel(ctx), func(tx Tx) error { return tx.(*boltTx).DropPack(m.id) })
		}
		for done := false; !done; {
			if err := ctx.Err(); err != nil {
				return errors.Join(err, drop())
			}
			pause()
			if done, err = b.stepMerge(ctx, m); err != nil {
				if ctx.Err() != nil { // ended while it waited for the lock
					return errors.Join(err, drop())
				}
				return err
			}
		}
		pause()
		if published, err := b.finishMerge(ctx, m); err != nil || !published {
			return err
		}
	}
}

// packMerge is a merge in progress: unpublished pack id, filled with the
// objects of the published packs of group, bucket by bucket in key order.
type packMerge struct {
	id      uint64
	group   []packStat
	space   int    // the bucket being copied: 0 blobs, 1 commits, 2 done
	after   []byte // the last key copied into it
	entries int64
	// filter gathers the keys copied so far; the last transaction stores
	// it with the pack.
	filter packFilter
	gone   bool // dropped, or a pack of group is gone
}

// startMerge starts the next merge MergePacks runs, if one is due: nil if
// not. A View looks first, so that a write that made no merge due does not
// pay for a durable transaction here.
func (b *Bolt) startMerge(ctx context.Context) (*packMerge, error) {
	var due bool
	if err := b.View(ctx, func(tx Tx) error {
		t := tx.(*boltTx)
		stats, err := t.publishedPackStats()
		due = t.policy.group(stats, t.policy.max) != nil
		return err
	}); err != nil || !due {
		return nil, err
	}
	var m *packMerge
	err := b.Update(ctx, func(tx Tx) error {
		t := tx.(*boltTx)
		stats, err := t.publishedPackStats()
		if err != nil {
			return err
		}
		group := t.policy.group(stats, t.policy.max)
		if group == nil {
			return nil
		}
		pb, id, err := t.newPack(bucketStaging, time.Now())
		if err != nil {
			return err
		}
		var ids []byte
		for _, p := range group {
			ids = binary.BigEndian.AppendUint64(ids, p.id)
		}
		m = &packMerge{id: id, group: group, filter: newPackFilter(groupEntries(group))}
		return pb.Put(keyPackMerging, ids)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// stepMerge copies up to inline more entries into m in one transaction and
// reports whether m has nothing left to copy (or gave up).
func (b *Bolt) stepMerge(ctx context.Context, m *packMerge) (done bool, err error) {
	names := [][]byte{bucketBlobs, bucketCommits}
	err = b.Update(ctx, func(tx Tx) error {
		t := tx.(*boltTx)
		dst, cur, ok := t.mergeInputs(m.id, m.group, names[m.space])
		if !ok {
			m.gone = true
			return t.DropPack(m.id)
		}
		last, n, err := copyMerged(dst, cur, m.after, t.policy.inline, m.filter)
		if err != nil {
			return fmt.Errorf("merge packs into %d: %w", m.id, err)
		}
		m.entries += n
		if last == nil {
			m.space, m.after = m.space+1, nil
		} else {
			m.after = clone(last)
		}
		return nil
	})
	return err != nil || m.gone || m.space == len(names), err
}

// finishMerge publishes m in place of the packs it merged, in one
// transaction, and reports whether it did (false: m gave up).
func (b *Bolt) finishMerge(ctx context.Context, m *packMerge) (bool, error) {
	if m.gone {
		return false, nil
	}
	err := b.Update(ctx, func(tx Tx) error {
		t := tx.(*boltTx)
		if _, _, ok := t.mergeInputs(m.id, m.group, bucketBlobs); !ok {
			m.gone = true
			return t.DropPack(m.id)
		}
		// bbolt moves a bucket as its last commit left it: the pack is
		// marked published after the move.
		packs := t.tx.Bucket(bucketPacks)
		if err := t.tx.MoveBucket(packKey(m.id), t.tx.Bucket(bucketStaging), packs); err != nil {
			return fmt.Errorf("publish merged pack %d: %w", m.id, err)
		}
		dst := packs.Bucket(packKey(m.id))
		if err := dst.Delete(keyPackMerging); err != nil {
			return fmt.Errorf("publish merged pack %d: %w", m.id, err)
		}
		return t.replaceGroup(dst, m.id, m.group, time.Now(), m.entries, m.filter)
	})
	return err == nil && !m.gone, err
}

// mergeInputs returns, for merge in progress id of the packs in group, its
// bucket named name and a cursor over the same bucket of every pack of
// group; ok is false when the merge was dropped or a pack of group is gone.
func (t *boltTx) mergeInputs(id uint64, group []packStat, name []byte) (dst *bolt.Bucket, cur *mergedCursor, ok bool) {
	pb, err := t.stagingPack(id)
	if err != nil || pb.Get(keyPackMerging) == nil {
		return nil, nil, false
	}
	if cur, ok = t.groupCursor(group, name); !ok {
		return nil, nil, false
	}
	return pb.Bucket(name), cur, true
}

// groupCursor returns a cursor over the buckets named name of the
// published packs of group at once; ok is false if one of them is gone.
func (t *boltTx) groupCursor(group []packStat, name []byte) (cur *mergedCursor, ok bool) {
	packs := t.tx.Bucket(bucketPacks)
	if packs == nil {
		return nil, false
	}
	cs := make([]kvCursor, len(group))
	for i, p := range group {
		src := packs.Bucket(packKey(p.id))
		if src == nil || src.Bucket(name) == nil {
			return nil, false
		}
		cs[i] = src.Bucket(name).Cursor()
	}
	return newMergedCursor(cs), true
}

// dropMerges drops every merge in progress, once per transaction: called
// before objects are deleted from published packs, whose copies the merges
// would otherwise bring back.
func (t *boltTx) dropMerges() error {
	if t.mergesDropped {
		return nil
	}
	t.mergesDropped = true
	st := t.tx.Bucket(bucketStaging)
	if st == nil {
		return nil
	}
	var ids [][]byte
	if err := st.ForEachBucket(func(k []byte) error {
		if st.Bucket(k).Get(keyPackMerging) != nil {
			ids = append(ids, clone(k))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, k := range ids {
		t.erased = true
		if err := st.DeleteBucket(k); err != nil {
			return fmt.Errorf("drop merge in progress %x: %w", k, err)
		}
	}
	return nil
}
