package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// ChainImport writes chains of new commits, each from a root commit of its
// own, and a new ref per chain, all or nothing: the bulk load of many
// separate conversations.
//
// Chains that fit one batch (batchObjects commits, batchBytes of texts
// and encodings) are held and written in one transaction. More go, with
// their counters, to a PackSorter (its runs in the directory given) and
// are written as a pack a batch per transaction (PackBuilder), which no
// reader sees until Publish's last transaction publishes it with every
// ref and its reflog entry. Memory holds a batch of objects and a tip per
// chain, however many chains come.
type ChainImport struct {
	update       func(context.Context, func(Tx) error) error
	now          func() time.Time
	dir          string
	batchObjects int
	batchBytes   int

	// tips are the chains' last commits and lengths, in order.
	tips []chainTip
	// Until the input outgrows a batch: the chains' objects, held.
	commits []NewCommit
	blobs   []NewBlob
	size    int
	// Once it has: the sorter the objects go to, and the pack.
	sorter *PackSorter
	pw     *PackBuilder
}

// chainTip is the last commit of an imported chain and its length.
type chainTip struct {
	hash    dag.Hash
	commits int
}

// NewChainImport returns an import that runs its transactions with update
// (a Store's Update, or a handle's that refuses once closed), dates them
// with now, sorts in dir (see NewPackSorter) and holds at most a batch of
// batchObjects commits or batchBytes bytes.
func NewChainImport(update func(context.Context, func(Tx) error) error, now func() time.Time, dir string, batchObjects, batchBytes int) *ChainImport {
	return &ChainImport{update: update, now: now, dir: dir, batchObjects: batchObjects, batchBytes: batchBytes}
}

// Add takes a chain: commits in chain order from a root commit, blobs[i]
// commits[i]'s text. It is held while the chains fit a batch, else handed
// to the sorter.
func (ci *ChainImport) Add(commits []NewCommit, blobs []NewBlob) error {
	if len(commits) == 0 || len(blobs) != len(commits) {
		return fmt.Errorf("add a chain: %d commits and %d texts (a chain is one or more commits, each with its text)", len(commits), len(blobs))
	}
	ci.tips = append(ci.tips, chainTip{commits[len(commits)-1].Hash, len(commits)})
	if ci.sorter == nil {
		ci.commits, ci.blobs = append(ci.commits, commits...), append(ci.blobs, blobs...)
		for i, c := range commits {
			ci.size += len(blobs[i].Data) + len(c.Raw)
		}
		if len(ci.commits) <= ci.batchObjects && ci.size <= ci.batchBytes {
			return nil
		}
		// The input outgrew a batch: from now on, a pack.
		ci.sorter = NewPackSorter(ci.dir, ci.batchBytes)
		commits, blobs = ci.commits, ci.blobs
		ci.commits, ci.blobs, ci.size = nil, nil, 0
	}
	_, err := ci.sorter.AddChain(Counters{}, commits, blobs) // each chain starts from a root
	return err
}

// Len is the number of chains added.
func (ci *ChainImport) Len() int { return len(ci.tips) }

// Tip returns the last commit of chain i (0 ≤ i < Len) and its length.
func (ci *ChainImport) Tip(i int) (dag.Hash, int) { return ci.tips[i].hash, ci.tips[i].commits }

// ImportedRefs says where Publish puts each chain.
type ImportedRefs struct {
	// Ref is the full name of the ref of chain i.
	Ref func(i int) string
	// Message is the message of the reflog entry of chain i of n.
	Message func(i, n int) string
	// Exists is the error for the ref of chain i when it exists already.
	Exists func(i int) error
}

// Publish writes what Add held, or the sorted pack, and then, in one last
// transaction, publishes the pack and sets each chain's ref to its tip,
// with a reflog entry of action: either every ref is set or none is. A
// ref that exists already fails the transaction with names.Exists's error
// for it.
//
// Where the store stages refs with a pack (PackRefTx), the refs and their
// entries are staged a batch per transaction first, and the last
// transaction only checks that none exists and publishes: its size does
// not grow with the number of chains.
func (ci *ChainImport) Publish(ctx context.Context, action string, names ImportedRefs) error {
	staged := false
	if ci.sorter != nil {
		ci.pw = NewPackBuilder(ci.update, ci.now, ci.batchBytes)
		if err := ci.pw.Write(ctx, ci.sorter); err != nil {
			return err
		}
		var err error
		if staged, err = ci.stage(ctx, action, names); err != nil {
			return err
		}
	}
	n := len(ci.tips)
	err := ci.update(ctx, func(tx Tx) error {
		for i := range ci.tips {
			if _, err := tx.Ref(names.Ref(i)); err == nil {
				return names.Exists(i)
			} else if !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		if ci.pw != nil {
			if err := tx.(PackTx).PublishPack(ci.pw.Pack()); err != nil {
				return err
			}
		} else if err := PutChain(tx, ci.now(), ci.commits, ci.blobs); err != nil {
			return err
		}
		if staged {
			return nil
		}
		now := ci.now()
		for i, tip := range ci.tips {
			ref := names.Ref(i)
			if err := tx.SetRef(refs.Ref{Name: ref, Hash: tip.hash}); err != nil {
				return err
			}
			if err := tx.AppendReflog(ref, refs.Entry{New: tip.hash, Time: now, Action: action, Message: names.Message(i, n)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if ci.pw != nil {
		ci.pw.Published()
	}
	return nil
}

// stageBatch is how many refs one transaction of stage stages.
const stageBatch = 8192

// stage stages the chains' refs with the pack, a batch per transaction,
// if the store does that (PackRefTx); it reports whether it did.
func (ci *ChainImport) stage(ctx context.Context, action string, names ImportedRefs) (bool, error) {
	n := len(ci.tips)
	rs := make([]refs.Ref, 0, min(n, stageBatch))
	es := make([]refs.Entry, 0, min(n, stageBatch))
	for from := 0; from < n; from += stageBatch {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		rs, es = rs[:0], es[:0]
		now := ci.now()
		for i := from; i < min(n, from+stageBatch); i++ {
			rs = append(rs, refs.Ref{Name: names.Ref(i), Hash: ci.tips[i].hash})
			es = append(es, refs.Entry{New: ci.tips[i].hash, Time: now, Action: action, Message: names.Message(i, n)})
		}
		unsupported := false
		err := ci.update(ctx, func(tx Tx) error {
			p, ok := tx.(PackRefTx)
			if !ok {
				unsupported = true
				return nil
			}
			return p.StagePackRefs(ci.pw.Pack(), rs, es)
		})
		if err != nil || unsupported {
			return false, err
		}
	}
	return true, nil
}

// Packed says whether the import went through a pack (its caller then
// runs the merges of packs it made due, see PackMerger).
func (ci *ChainImport) Packed() bool { return ci.sorter != nil }

// Close drops a pack that was not published, even when ctx is done, and
// removes the sorter's files.
func (ci *ChainImport) Close(ctx context.Context) {
	if ci.pw != nil {
		ci.pw.Drop(ctx)
	}
	if ci.sorter != nil {
		_ = ci.sorter.Close()
	}
}
