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
// An import is all or nothing: a conversation that is not valid (the
// error names it by its line), a branch that exists already
// (ErrBranchExists) or a cancelled ctx imports nothing. Conversations
// that fit one batch (see ImportBatch) are written in one transaction.
// More are read as a stream, as ImportSeq reads messages: sorted in runs
// in temporary files, written as a pack a batch per transaction, and
// published with every branch and its reflog entry in one last
// transaction (see store.ChainImport); a process killed before it leaves
// an unpublished pack, which GC drops. Memory holds a batch of objects,
// and a branch name and tip per conversation (about 100 bytes each),
// however long the input.
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
	prog := cfg.progress.start("conversations", 0)
	defer prog.Stop()
	ci := store.NewChainImport(t.update, t.now, t.sortDir(), cfg.batchMessages, cfg.batchBytes)
	defer ci.Close(ctx)
	defer t.Linger()()
	at, messages := t.now(), 0
	for conv, err := range convs {
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		which := fmt.Sprintf("conversation %d", ci.Len()+1)
		if conv.Line > 0 {
			which = fmt.Sprintf("line %d", conv.Line)
		}
		if len(conv.Messages) == 0 {
			return nil, fmt.Errorf("import: %s: no messages", which)
		}
		// Consecutive nanoseconds across conversations, as within one.
		commits, blobs, err := t.buildChain(ctx, Hash{}, conv.Messages, at.Add(time.Duration(messages)))
		if err != nil {
			return nil, fmt.Errorf("import: %s: %w", which, err)
		}
		messages += len(conv.Messages)
		if err := ci.Add(commits, blobs); err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		prog.Add(1)
	}
	if ci.Len() == 0 {
		return nil, fmt.Errorf("import: %w", ErrNoConversations)
	}
	// NAME-1 … NAME-N, the numbers as wide as N.
	width := len(strconv.Itoa(ci.Len()))
	branch := func(i int) string { return fmt.Sprintf("%s-%0*d", name, width, i+1) }
	if err := refs.ValidateBranchName(branch(ci.Len() - 1)); err != nil {
		return nil, fmt.Errorf("import: %w", err) // the longest name
	}
	err := ci.Publish(ctx, refs.ActionImport, store.ImportedRefs{
		Ref: func(i int) string { return refs.BranchRef(branch(i)) },
		Message: func(i, n int) string {
			_, commits := ci.Tip(i)
			return fmt.Sprintf("import: conversation %d of %d, %s", i+1, n, english.Count(commits, "commit", "commits"))
		},
		Exists: func(i int) error { return fmt.Errorf("%w: %s", ErrBranchExists, branch(i)) },
	})
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if ci.Packed() {
		t.mergePacks(ctx)
	}
	out := make([]Branch, ci.Len())
	for i := range out {
		tip, _ := ci.Tip(i)
		out[i] = Branch{Name: branch(i), Hash: tip}
	}
	return out, nil
}
