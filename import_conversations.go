package tract

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/internal/progress"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// ErrNoConversations is the error of ImportConversations for an input
// without a conversation.
var ErrNoConversations = errors.New("no conversations to import")

// ImportConversations writes each conversation convs yields (see
// ReadConversations) as a chain of its own, from a root commit of its own
// (a conversation stands alone: appended to a history it would be another
// conversation), on a new branch: NAME-1, NAME-2, … in the order given,
// numbered with as many digits as the last number needs (NAME-01 …
// NAME-12), so that the branches sort in that order and
// Export(ExportAll()) writes them back in it. HEAD does not move.
//
// An import is all or nothing: a conversation that is not valid (the
// error names it by its line), a branch that exists already
// (ErrBranchExists) or a cancelled ctx imports nothing. Conversations
// that fit one batch (see ImportBatch) are written in one transaction.
// More are read as a stream, as ImportSeq reads messages: sorted in runs
// in temporary files, written as a pack a batch per transaction, and
// published with every branch and its reflog entry in one last
// transaction; a process killed before it leaves an unpublished pack,
// which GC drops. Memory holds a batch of objects, and a branch name and
// tip per conversation (about 100 bytes each), however long the input.
func (t *Tract) ImportConversations(ctx context.Context, name string, convs iter.Seq2[Conversation, error], opts ...ImportOption) ([]Branch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := refs.ValidateBranchName(name); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if err := refs.ValidateBranchName(name + "-1"); err != nil {
		// Too long for the shortest branch name it makes: say so before
		// reading the input.
		return nil, fmt.Errorf("import: %w", err)
	}
	cfg := importConfig{batchMessages: DefaultImportBatchMessages, batchBytes: DefaultImportBatchBytes}
	for _, o := range opts {
		o(&cfg)
	}
	ci := &convImporter{t: t, ctx: ctx, cfg: cfg, progress: cfg.progress.start("conversations", 0)}
	defer ci.progress.Stop()
	defer ci.close()
	defer t.linger()()
	out, err := ci.run(name, convs)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return out, nil
}

// convImporter is one run of ImportConversations.
type convImporter struct {
	t        *Tract
	ctx      context.Context
	cfg      importConfig
	progress *progress.Counter // counts the conversations read

	// tips are the conversations' last commits and lengths, in order.
	tips []convTip
	// Until the input outgrows a batch: the chains' objects, held.
	commits  []store.NewCommit
	blobs    []store.NewBlob
	size     int
	messages int // in all
	// Once it has: the sorter the objects go to, and the pack.
	sorter *store.PackSorter
	pw     *store.PackBuilder
}

// convTip is the tip of an imported conversation and its length.
type convTip struct {
	hash    Hash
	commits int
}

func (ci *convImporter) run(name string, convs iter.Seq2[Conversation, error]) ([]Branch, error) {
	at := ci.t.now()
	for conv, err := range convs {
		if err == nil {
			err = ci.ctx.Err()
		}
		if err != nil {
			return nil, err
		}
		which := fmt.Sprintf("conversation %d", len(ci.tips)+1)
		if conv.Line > 0 {
			which = fmt.Sprintf("line %d", conv.Line)
		}
		if len(conv.Messages) == 0 {
			return nil, fmt.Errorf("%s: no messages", which)
		}
		// Consecutive nanoseconds across conversations, as within one.
		commits, blobs, err := ci.t.buildChain(ci.ctx, Hash{}, conv.Messages, at.Add(time.Duration(ci.messages)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", which, err)
		}
		ci.messages += len(conv.Messages)
		ci.tips = append(ci.tips, convTip{commits[len(commits)-1].Hash, len(commits)})
		if err := ci.add(commits, blobs); err != nil {
			return nil, err
		}
		ci.progress.Add(1)
	}
	if len(ci.tips) == 0 {
		return nil, ErrNoConversations
	}
	out, err := ci.branches(name)
	if err != nil {
		return nil, err
	}
	if ci.sorter != nil {
		ci.pw = ci.t.newPackWriter(ci.cfg.batchBytes)
		if err := ci.pw.Write(ci.ctx, ci.sorter); err != nil {
			return nil, err
		}
	}
	err = ci.t.update(ci.ctx, func(tx store.Tx) error {
		for _, b := range out {
			if _, err := tx.Ref(refs.BranchRef(b.Name)); err == nil {
				return fmt.Errorf("%w: %s", ErrBranchExists, b.Name)
			} else if !isNotFound(err) {
				return err
			}
		}
		if ci.pw != nil {
			if err := tx.(store.PackTx).PublishPack(ci.pw.Pack()); err != nil {
				return err
			}
		} else if err := store.PutChain(tx, ci.t.now(), ci.commits, ci.blobs); err != nil {
			return err
		}
		now := ci.t.now()
		for i, b := range out {
			if err := tx.SetRef(refs.Ref{Name: refs.BranchRef(b.Name), Hash: b.Hash}); err != nil {
				return err
			}
			msg := fmt.Sprintf("import: conversation %d of %d, %s", i+1, len(out), english.Count(ci.tips[i].commits, "commit", "commits"))
			if err := tx.AppendReflog(refs.BranchRef(b.Name), refs.Entry{New: b.Hash, Time: now, Action: refs.ActionImport, Message: msg}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if ci.pw != nil {
		ci.pw.Published()
		ci.t.mergePacks(ci.ctx)
	}
	return out, nil
}

// add takes a conversation's chain: held while the input fits a batch,
// else handed, with its counters, to the sorter.
func (ci *convImporter) add(commits []store.NewCommit, blobs []store.NewBlob) error {
	if ci.sorter == nil {
		ci.commits, ci.blobs = append(ci.commits, commits...), append(ci.blobs, blobs...)
		for i, c := range commits {
			ci.size += len(blobs[i].Data) + len(c.Raw)
		}
		if len(ci.commits) <= ci.cfg.batchMessages && ci.size <= ci.cfg.batchBytes {
			return nil
		}
		// The input outgrew a batch: from now on, a pack.
		ci.sorter = ci.t.newPackSorter(ci.cfg.batchBytes)
		commits, blobs = ci.commits, ci.blobs
		ci.commits, ci.blobs, ci.size = nil, nil, 0
	}
	_, err := ci.sorter.AddChain(store.Counters{}, commits, blobs) // each conversation starts from a root
	return err
}

// branches names the conversations' branches, now that their number is
// known: NAME-1 … NAME-N, the numbers as wide as N.
func (ci *convImporter) branches(name string) ([]Branch, error) {
	width := len(strconv.Itoa(len(ci.tips)))
	out := make([]Branch, len(ci.tips))
	for i, tip := range ci.tips {
		out[i] = Branch{Name: fmt.Sprintf("%s-%0*d", name, width, i+1), Hash: tip.hash}
		if err := refs.ValidateBranchName(out[i].Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// close drops a pack that was not published and removes the sorter's
// files.
func (ci *convImporter) close() {
	if ci.pw != nil {
		ci.pw.Drop(ci.ctx)
	}
	if ci.sorter != nil {
		_ = ci.sorter.Close()
	}
}
