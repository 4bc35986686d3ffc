package tract

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/events"
	"github.com/tractdag/tract/export"
	"github.com/tractdag/tract/internal/compiled"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// ExportOption configures Export.
type ExportOption func(*exportConfig)

type exportConfig struct {
	rev      string
	all      bool
	branches []string
	filter   export.Filter
	weights  export.Weights
	progress func(ExportProgress)
}

// ExportRev exports the conversation ending at rev (default HEAD): in the
// OpenAI format that conversation, in the preference formats the
// validated turns whose restore point is on it.
func ExportRev(rev string) ExportOption { return func(c *exportConfig) { c.rev = rev } }

// ExportAll exports the whole repository: in the OpenAI format one
// conversation per live branch, in branch name order, leaving out a
// branch whose tip lies on another branch's conversation (its
// conversation is a prefix of that one) and all but the first of branches
// at the same commit; in the preference formats every validated turn,
// those of deleted branches and orphaned chains included.
func ExportAll() ExportOption { return func(c *exportConfig) { c.all = true } }

// ExportBranches exports the conversations of the named branches, one
// each in the order given (the OpenAI format), or the validated turns
// whose restore point is on one of them (the preference formats).
func ExportBranches(names ...string) ExportOption {
	return func(c *exportConfig) { c.branches = append(c.branches, names...) }
}

// ExportTask keeps the validated turns with task id id; in the OpenAI
// format, the conversations holding an accepted answer of such a turn.
func ExportTask(id string) ExportOption { return func(c *exportConfig) { c.filter.Task = id } }

// ExportValidator keeps the validated turns whose validators (recorded
// under MetaValidators) include spec: a spec as given ("cmd:go test
// ./..."), or a validator kind alone ("cmd", "json"). In the OpenAI
// format it keeps the conversations holding an accepted answer of such a
// turn. Turns recorded before tract recorded validators match none.
func ExportValidator(spec string) ExportOption {
	return func(c *exportConfig) { c.filter.Validator = spec }
}

// ExportSince and ExportUntil keep what falls in a time range (a zero time
// leaves that end open): validated turns by the start of their first
// attempt, conversations (the OpenAI format) by the time of their last
// commit. Since is inclusive, until exclusive.
func ExportSince(t time.Time) ExportOption { return func(c *exportConfig) { c.filter.Since = t } }

// ExportUntil: see ExportSince.
func ExportUntil(t time.Time) ExportOption { return func(c *exportConfig) { c.filter.Until = t } }

// ExportMinAttempts keeps the validated turns that took at least n
// attempts; in the OpenAI format, the conversations holding an accepted
// answer that took at least n.
func ExportMinAttempts(n int) ExportOption { return func(c *exportConfig) { c.filter.MinAttempts = n } }

// ExportWeights sets which messages get a "weight" in the OpenAI format
// (default export.WeightsRecorded).
func ExportWeights(w export.Weights) ExportOption { return func(c *exportConfig) { c.weights = w } }

// OnExport reports progress to fn after each conversation or validated
// turn written, outside any transaction.
func OnExport(fn func(ExportProgress)) ExportOption { return func(c *exportConfig) { c.progress = fn } }

// ExportProgress is what Export has written so far.
type ExportProgress struct {
	// Items are the conversations (the OpenAI format) or the validated
	// turns (the preference formats) written, those that gave no line
	// included.
	Items int
	// Lines are the lines written.
	Lines int
}

// ExportResult is what Export wrote.
type ExportResult = ExportProgress

// Export writes the repository's conversations, or the answers of its
// validated turns, to w in format f, one JSON object a line (see package
// export for the formats), as it reads them: a conversation is read back
// to its root remembering only what each message is made of (as
// CompileSeq does), then written message by message, a page of commits
// per short read transaction, so no text is held longer than its message
// takes to write and no transaction lasts longer than a page. What memory
// grows with is small per commit: a message's parts (about 50 bytes) for
// the longest conversation; with ExportAll and several branches, the
// shape of every commit (read in one transaction, to find the leaf
// branches); in the preference formats, the metadata of the commits of
// validated turns (as Events reads them).
//
// What is exported: the conversation ending at HEAD by default, or
// ExportRev, ExportBranches, ExportAll. A conversation is its compiled
// context less what was not the conversation: steering messages, notes,
// error commits, and answers the validators rejected are left out;
// messages and summaries are written as their role.
//
// In the preference formats each validated turn (a Chat or Generate call
// with validators) gives its accepted answer and the answers its
// validators rejected, as its commits and their metadata record them (the
// attempts Events reads, orphaned ones included). The prompt is the
// context the turn started from: the conversation ending at its restore
// point (its user message), not the steered context a retry was answered
// from.
// Failed model calls gave no answer and give no line; a turn whose every
// attempt failed gives no pair (TRL KTO writes its rejected answers).
//
// A format that is not one of export.Formats is an error wrapping
// export.ErrUnknownFormat, and nothing is written.
func (t *Tract) Export(ctx context.Context, w io.Writer, f export.Format, opts ...ExportOption) (ExportResult, error) {
	cfg := exportConfig{weights: export.WeightsRecorded}
	for _, o := range opts {
		o(&cfg)
	}
	if err := ctx.Err(); err != nil {
		return ExportResult{}, err
	}
	if cfg.all && cfg.rev != "" || len(cfg.branches) > 0 && (cfg.all || cfg.rev != "") {
		return ExportResult{}, fmt.Errorf("export: give one of a revision, branches or all")
	}
	if _, err := export.ParseFormat(string(f)); err != nil {
		return ExportResult{}, fmt.Errorf("export: %w", err)
	}
	ew := export.NewWriter(w, f)
	ex := &exporter{t: t, ctx: ctx, cfg: &cfg, w: ew}
	var err error
	if f.Conversational() {
		err = ex.conversations()
	} else {
		err = ex.turns()
	}
	if ferr := ew.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return ex.progress, fmt.Errorf("export: %w", err)
	}
	return ex.progress, nil
}

// exporter is one run of Export.
type exporter struct {
	t        *Tract
	ctx      context.Context
	cfg      *exportConfig
	w        *export.Writer
	progress ExportProgress
}

// done counts an item written and reports the progress.
func (ex *exporter) done() {
	ex.progress.Items++
	ex.progress.Lines = ex.w.Lines()
	if ex.cfg.progress != nil {
		ex.cfg.progress(ex.progress)
	}
}

// conversations writes the selected conversations.
func (ex *exporter) conversations() error {
	tips, err := ex.tips()
	if err != nil {
		return err
	}
	var ch *exportChain // one conversation's parts at a time
	for _, tip := range tips {
		if tip.IsZero() {
			continue // an unborn branch
		}
		ch, err = ex.t.exportChain(ex.ctx, tip, true, ch)
		if err != nil {
			return err
		}
		if !ex.cfg.filter.Conversation(ch.tipTime, ch.accepted) {
			continue
		}
		if err := ex.w.Conversation(ex.t.exportMessages(ex.ctx, ch, ex.cfg.weights)); err != nil {
			return err
		}
		ex.done()
	}
	return nil
}

// tips returns the tips of the conversations to export.
func (ex *exporter) tips() ([]Hash, error) {
	c := ex.cfg
	switch {
	case c.all:
		return ex.t.leafTips(ex.ctx)
	case len(c.branches) > 0:
		var out []Hash
		err := ex.t.view(ex.ctx, func(tx store.Tx) error {
			for _, b := range c.branches {
				h, err := branchTip(tx, b)
				if err != nil {
					return err
				}
				out = append(out, h)
			}
			return nil
		})
		return out, err
	}
	var tip Hash
	err := ex.t.view(ex.ctx, func(tx store.Tx) (err error) {
		tip, err = ex.t.tipOf(tx, c.rev)
		return err
	})
	return []Hash{tip}, err
}

// branchTip returns where branch name points (zero when it is unborn).
func branchTip(tx store.Tx, name string) (Hash, error) {
	r, err := tx.Ref(refs.BranchRef(name))
	if isNotFound(err) {
		return Hash{}, fmt.Errorf("%w: %s", ErrBranchNotFound, name)
	}
	return r.Hash, err
}

// leafTips returns the tips of the live branches in name order, leaving
// out a tip that lies on another branch's first-parent chain or repeats
// an earlier one. It reads the shape of every commit in one read
// transaction (a scan in key order, much faster than following the
// chains commit by commit) and walks the chains in memory.
func (t *Tract) leafTips(ctx context.Context) ([]Hash, error) {
	branches, err := t.Branches(ctx)
	if err != nil {
		return nil, err
	}
	tips := make([]Hash, len(branches))
	for i, b := range branches {
		tips[i] = b.Hash
	}
	if len(tips) <= 1 {
		return tips, nil // nothing to leave out
	}
	var g *dag.Graph
	if err := t.view(ctx, func(tx store.Tx) (err error) { g, err = store.LoadGraph(tx); return err }); err != nil {
		return nil, err
	}
	return g.Leaves(tips), ctx.Err()
}

// exportPart is what an exported message is made of: what compiled.One
// reads of its commit's header to make the message a model is sent.
type exportPart struct {
	hash   Hash
	blob   Hash
	shaped bool // its metadata may hold a message shape (see MetaShape)
	kind   Kind
	role   Role
	weight int8 // the recorded weight; -1 for none
	last   bool // the conversation's last assistant message
}

// exportChain is a conversation read back from its tip.
type exportChain struct {
	links    []store.ChainLink // a page of the walk, reused
	parts    []exportPart      // newest first
	tipTime  time.Time
	accepted []export.Accepted
}

// exportMeta is the metadata an export reads.
type exportMeta struct {
	Valid      *bool    `json:"valid"`
	Weight     *int     `json:"weight"`
	Task       string   `json:"task"`
	Validators []string `json:"validators"`
	Provenance *struct {
		Attempts int `json:"attempts"`
	} `json:"provenance"`
}

// exportChain walks the first-parent chain back from tip, a page of
// commits per read transaction, remembering what each exported message
// is made of (and, with facts, what the filters need). It reuses ch's
// memory when ch is not nil.
func (t *Tract) exportChain(ctx context.Context, tip Hash, facts bool, ch *exportChain) (*exportChain, error) {
	if ch == nil {
		ch = &exportChain{}
	}
	ch.parts, ch.accepted, ch.tipTime = ch.parts[:0], ch.accepted[:0], time.Time{}
	next, lastSeen := tip, false
	size := pageSize / 4 // growing to 16 pages: most conversations are short
	page := func(tx store.Tx) ([]struct{}, bool, error) {
		// The whole commit of the tip (for its time) and of every message
		// and summary (for its metadata).
		links, cs, err := store.AppendChainCommits(ch.links[:0], tx, next, size, func(l store.ChainLink) bool {
			return l.Hash == tip || l.Header.Kind == KindMessage || l.Header.Kind == KindSummary
		})
		size = min(4*size, 16*pageSize)
		if err != nil {
			return nil, false, err
		}
		ch.links = links
		for k, c := range cs {
			if c == nil {
				continue
			}
			h := links[k].Hash
			if h == tip {
				ch.tipTime = c.Time
			}
			if c.Kind != KindMessage && c.Kind != KindSummary {
				continue
			}
			var m exportMeta
			if len(c.Meta) > 0 && json.Unmarshal(c.Meta, &m) != nil {
				m = exportMeta{}
			}
			if m.Valid != nil && !*m.Valid {
				continue // a rejected answer
			}
			p := exportPart{hash: h, blob: c.Blob, shaped: dag.MayHoldShape(c.Meta), kind: c.Kind, role: c.Role, weight: -1}
			if m.Weight != nil {
				p.weight = int8(*m.Weight)
			}
			if c.Role == RoleAssistant && !lastSeen {
				p.last, lastSeen = true, true
			}
			ch.parts = append(ch.parts, p)
			if facts && m.Provenance != nil {
				ch.accepted = append(ch.accepted, export.Accepted{Task: m.Task, Validators: m.Validators, Attempts: m.Provenance.Attempts})
			}
		}
		if len(links) > 0 {
			next = links[len(links)-1].Header.Parent
		}
		return nil, !next.IsZero(), nil
	}
	if err := walkPages(ctx, t, page, func(struct{}) bool { return true }); err != nil {
		return nil, err
	}
	return ch, nil
}

// exportMessages yields the messages of ch, oldest first, reading their
// texts a page per read transaction, weighted as w says.
func (t *Tract) exportMessages(ctx context.Context, ch *exportChain, w export.Weights) iter.Seq2[export.Message, error] {
	return func(yield func(export.Message, error) bool) {
		next := len(ch.parts) - 1 // oldest first
		forward := func(tx store.Tx) ([]export.Message, bool, error) {
			n := min(pageSize, next+1)
			parts := make([]exportPart, n)
			links := make([]store.ChainLink, n)
			for i := range parts {
				p := ch.parts[next-i]
				parts[i] = p
				links[i] = store.ChainLink{Hash: p.hash, Header: dag.Header{Kind: p.kind, Role: p.role, Blob: p.blob, Shaped: p.shaped}}
			}
			next -= n
			msgs, _, err := compiled.Page(tx, links, false)
			if err != nil {
				return nil, false, err
			}
			out := make([]export.Message, 0, n)
			for i, p := range parts {
				m := export.Message{Message: msgs[i].Message()}
				switch {
				case w == export.WeightsRecorded && p.weight >= 0:
					m.Weight = weight(int(p.weight))
				case w == export.WeightsAssistantLast && p.role == RoleAssistant:
					m.Weight = weight(0)
					if p.last {
						m.Weight = weight(1)
					}
				}
				out = append(out, m)
			}
			return out, next >= 0, nil
		}
		if err := walkPages(ctx, t, forward, func(m export.Message) bool { return yield(m, nil) }); err != nil {
			yield(export.Message{}, err)
		}
	}
}

func weight(n int) *int { return &n }

// promptSeq yields the conversation ending at h, each time it is ranged
// over (it reads it again each time: a prompt is never held whole).
func (t *Tract) promptSeq(ctx context.Context, h Hash) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		ch, err := t.exportChain(ctx, h, false, nil)
		if err != nil {
			yield(Message{}, err)
			return
		}
		for m, err := range t.exportMessages(ctx, ch, export.WeightsNone) {
			if !yield(m.Message, err) || err != nil {
				return
			}
		}
	}
}

// turns writes the selected validated turns.
func (ex *exporter) turns() error {
	traces, err := ex.t.traces(ex.ctx, nil)
	if err != nil {
		return err
	}
	var on map[Hash]bool // the commits of the selected conversations; nil: all
	if !ex.cfg.all {
		tips, err := ex.tips()
		if err != nil {
			return err
		}
		if on, err = ex.t.chainSet(ex.ctx, tips); err != nil {
			return err
		}
	}
	for _, tn := range traces {
		if on != nil && !on[tn.Restore] || !ex.cfg.filter.Turn(tn.Task, tn.Attempts(), tn.Start(), validatorsOf(tn)) {
			continue
		}
		et, ok, err := ex.t.exportTurn(ex.ctx, tn)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := ex.w.Turn(et); err != nil {
			return err
		}
		ex.done()
	}
	return nil
}

// validatorsOf yields the validators each step of tn recorded.
func validatorsOf(tn *events.Trace) iter.Seq[[]string] {
	return func(yield func([]string) bool) {
		for _, s := range tn.Steps {
			if !yield(s.Meta.Validators) {
				return
			}
		}
	}
}

// exportTurn reads the answers of a validated turn; ok is false for a
// turn no validator judged.
func (t *Tract) exportTurn(ctx context.Context, tn *events.Trace) (et export.Turn, ok bool, err error) {
	accepted, rejected, ok := tn.Answers()
	if !ok {
		return et, false, nil
	}
	err = t.view(ctx, func(tx store.Tx) error {
		text := func(h Hash) (Message, error) {
			c, err := tx.Commit(h)
			if err != nil {
				return Message{}, err // it names the commit
			}
			m, _, err := compiled.One(tx, h, c, false)
			return m.Message(), err
		}
		if !accepted.IsZero() {
			m, err := text(accepted)
			if err != nil {
				return err
			}
			et.Accepted = &m
		}
		for _, h := range rejected {
			m, err := text(h)
			if err != nil {
				return err
			}
			et.Rejected = append(et.Rejected, m)
		}
		return nil
	})
	et.Prompt = t.promptSeq(ctx, tn.Restore)
	return et, err == nil, err
}

// chainSet returns the commits on the first-parent chains of tips.
func (t *Tract) chainSet(ctx context.Context, tips []Hash) (map[Hash]bool, error) {
	on := make(map[Hash]bool)
	for _, next := range tips {
		for !next.IsZero() && !on[next] {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			err := t.view(ctx, func(tx store.Tx) error {
				// Pages growing from one commit: a tip's chain most often
				// meets one already walked within a few commits.
				for size := 1; size <= 16*pageSize && !next.IsZero() && !on[next]; size *= 4 {
					links, err := store.ReadChain(tx, next, size, Hash{})
					if err != nil {
						return err
					}
					for _, l := range links {
						if on[l.Hash] {
							break
						}
						on[l.Hash] = true
						next = l.Header.Parent
					}
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return on, nil
}
