package tract

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/tractdag/tract/internal/english"
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
// An import is all or nothing, in one transaction: a conversation that
// is not valid (the error names it by its line), a branch that exists
// already (ErrBranchExists) or a cancelled ctx imports nothing. The
// conversations' commits are held in memory until that transaction: split
// a data set larger than memory into several imports.
func (t *Tract) ImportConversations(ctx context.Context, name string, convs iter.Seq2[Conversation, error]) ([]Branch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := refs.ValidateBranchName(name); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	type chain struct {
		commits []store.NewCommit
		blobs   []store.NewBlob
	}
	var chains []chain
	at, n := t.now(), 0
	for conv, err := range convs {
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		which := fmt.Sprintf("conversation %d", len(chains)+1)
		if conv.Line > 0 {
			which = fmt.Sprintf("line %d", conv.Line)
		}
		if len(conv.Messages) == 0 {
			return nil, fmt.Errorf("import: %s: no messages", which)
		}
		// Consecutive nanoseconds across conversations, as within one.
		commits, blobs, err := t.buildChain(ctx, Hash{}, conv.Messages, at.Add(time.Duration(n)))
		if err != nil {
			return nil, fmt.Errorf("import: %s: %w", which, err)
		}
		n += len(conv.Messages)
		chains = append(chains, chain{commits, blobs})
	}
	if len(chains) == 0 {
		return nil, fmt.Errorf("import: %w", ErrNoConversations)
	}
	width := len(strconv.Itoa(len(chains)))
	out := make([]Branch, len(chains))
	for i, c := range chains {
		out[i] = Branch{Name: fmt.Sprintf("%s-%0*d", name, width, i+1), Hash: c.commits[len(c.commits)-1].Hash}
		if err := refs.ValidateBranchName(out[i].Name); err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
	}
	err := t.update(ctx, func(tx store.Tx) error {
		for _, b := range out {
			if _, err := tx.Ref(refs.BranchRef(b.Name)); err == nil {
				return fmt.Errorf("%w: %s", ErrBranchExists, b.Name)
			} else if !isNotFound(err) {
				return err
			}
		}
		var commits []store.NewCommit
		var blobs []store.NewBlob
		for _, c := range chains {
			commits = append(commits, c.commits...)
			blobs = append(blobs, c.blobs...)
		}
		if err := store.PutChain(tx, t.now(), commits, blobs); err != nil {
			return err
		}
		for i, b := range out {
			if err := tx.SetRef(refs.Ref{Name: refs.BranchRef(b.Name), Hash: b.Hash}); err != nil {
				return err
			}
			msg := fmt.Sprintf("import: conversation %d of %d, %s", i+1, len(out), english.Count(len(chains[i].commits), "commit", "commits"))
			if err := tx.AppendReflog(refs.BranchRef(b.Name), refs.Entry{New: b.Hash, Time: t.now(), Action: refs.ActionImport, Message: msg}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return out, nil
}
