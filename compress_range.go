package tract

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract/compress"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store"
)

// Errors and results of CompressRange (see package compress).
type (
	// RangeEndError is returned by PlanCompress and CompressRange when a
	// revision given for an end of the range cannot end it.
	RangeEndError = compress.RangeEndError
	// GroupProgress describes one summarized group (OnGroup).
	GroupProgress = compress.Progress
	// CompressResult reports what CompressRange did.
	CompressResult = compress.Result
)

// Errors of CompressRange, besides those of package compress
// (compress.ErrEmptyRange, compress.ErrNothingToSummarize).
var (
	// ErrNotOnChain is returned when a range end is not on the current
	// branch's first-parent chain.
	ErrNotOnChain = compress.ErrNotOnChain
	// ErrReversedRange is returned when from is newer than to.
	ErrReversedRange = compress.ErrReversedRange
	// ErrSummaryCount is returned, wrapped with the counts, by
	// CompressRange when the summaries given (Summaries) are not one per
	// summarized group (PlanCompress lists the groups).
	ErrSummaryCount = compress.ErrSummaryCount
)

// CompressOption configures CompressRange and PlanCompress.
type CompressOption func(*compressConfig)

type compressConfig struct {
	keepLast     int
	client       llm.Client
	model        string
	schema       *llm.Schema
	target       int
	tolerance    float64
	instructions string
	contents     []string
	validators   []retry.Validator
	maxAttempts  int
	pinned       map[Hash]bool
	tokenizer    compress.Tokenizer
	onGroup      func(GroupProgress)
}

// KeepLast leaves the last n commits of the chain out of the range when to
// is not given: "compress everything but the last n".
func KeepLast(n int) CompressOption { return func(c *compressConfig) { c.keepLast = n } }

// SummaryClient sends the summarization calls to cl (default: the client
// given to Open).
func SummaryClient(cl llm.Client) CompressOption { return func(c *compressConfig) { c.client = cl } }

// SummarySchema sends schema with every summarization request, for output
// constrained to it where the provider supports it (see llm.Schema); the
// summaries are still validated.
func SummarySchema(schema *llm.Schema) CompressOption {
	return func(c *compressConfig) { c.schema = schema }
}

// SummaryModel names the summarization model (default: the client's).
func SummaryModel(name string) CompressOption { return func(c *compressConfig) { c.model = name } }

// TargetTokens asks for summaries of about n tokens (estimated) and rejects
// summaries over it by more than the tolerance (default 20%).
func TargetTokens(n int) CompressOption { return func(c *compressConfig) { c.target = n } }

// TargetTolerance sets how far over TargetTokens a summary may go, as a
// fraction (0.2 = 20%); negative makes the target a hard maximum.
func TargetTolerance(f float64) CompressOption { return func(c *compressConfig) { c.tolerance = f } }

// Instructions adds extra instructions to the summarization prompt.
func Instructions(text string) CompressOption {
	return func(c *compressConfig) { c.instructions = text }
}

// Summaries supplies the summaries instead of calling a model: one text per
// summarized group, in order (PlanCompress tells how many). Validators still
// run on them.
func Summaries(texts ...string) CompressOption { return func(c *compressConfig) { c.contents = texts } }

// ValidateSummaries adds validators that every summary must pass.
func ValidateSummaries(vs ...retry.Validator) CompressOption {
	return func(c *compressConfig) { c.validators = append(c.validators, vs...) }
}

// SummaryAttempts sets the attempts per summary, the first included (default 3).
func SummaryAttempts(n int) CompressOption { return func(c *compressConfig) { c.maxAttempts = n } }

// Pin keeps these commits in place in addition to system messages and
// commits whose metadata has "pinned": true.
func Pin(hs ...Hash) CompressOption {
	return func(c *compressConfig) {
		for _, h := range hs {
			c.pinned[h] = true
		}
	}
}

// WithTokenizer counts tokens with tok instead of the documented estimate
// (compress.Estimator).
func WithTokenizer(tok compress.Tokenizer) CompressOption {
	return func(c *compressConfig) { c.tokenizer = tok }
}

// OnGroup reports progress: each summary as it is accepted.
func OnGroup(fn func(GroupProgress)) CompressOption {
	return func(c *compressConfig) { c.onGroup = fn }
}

// CompressPlan is what CompressRange would do, as PlanCompress reports it.
type CompressPlan struct {
	// Head is HEAD when the plan was made.
	Head Hash `json:"head"`
	// Groups are the range's groups in order: kept (pinned) commits and runs
	// to be summarized.
	Groups []PlanGroup `json:"groups"`
	// Dropped are the note and error commits left out of the new chain.
	Dropped []*CommitInfo `json:"dropped"`
	// Replay is the number of commits after the range that will be replayed.
	Replay int `json:"replay"`
	// TokensBefore estimates the size of the range's messages.
	TokensBefore int `json:"tokens_before"`

	plan  *compress.PlanResult
	base  Hash   // parent of the range's first commit (zero at the root)
	tail  []Hash // commits after the range, oldest first
	start Hash   // first commit of the range
}

// PlanGroup is one group of a CompressPlan.
type PlanGroup struct {
	// Keep is true for a pinned commit kept in place.
	Keep bool `json:"keep"`
	// Commits are the group's commits, oldest first.
	Commits []*CommitInfo `json:"commits"`
	// Tokens estimates their size.
	Tokens int `json:"tokens"`
}

// Summarized returns the number of groups that become summaries.
func (p *CompressPlan) Summarized() int { return p.plan.Summarized() }

func (t *Tract) compressConfig(opts []CompressOption) *compressConfig {
	cfg := &compressConfig{client: t.client, pinned: map[Hash]bool{}}
	for _, o := range opts {
		o(cfg)
	}
	return cfg
}

// PlanCompress resolves the range of a CompressRange call and reports which
// commits would be kept, summarized, dropped and replayed, without calling
// a model or writing anything.
func (t *Tract) PlanCompress(ctx context.Context, from, to string, opts ...CompressOption) (*CompressPlan, error) {
	cfg := t.compressConfig(opts)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var plan *CompressPlan
	err := t.view(ctx, func(tx store.Tx) (err error) {
		plan, err = t.planCompress(tx, from, to, cfg)
		return err
	})
	if err != nil {
		return nil, compressError(err)
	}
	return plan, nil
}

// compressError adds "compress: " to err, unless err is one of package
// compress's errors of a range, which say it already.
func compressError(err error) error {
	if errors.Is(err, compress.ErrEmptyRange) || errors.Is(err, compress.ErrNothingToSummarize) {
		return err
	}
	return fmt.Errorf("compress: %w", err)
}

func (t *Tract) planCompress(tx store.Tx, from, to string, cfg *compressConfig) (*CompressPlan, error) {
	cur, err := t.position(tx)
	if err != nil {
		return nil, err
	}
	if cur.detached() {
		return nil, fmt.Errorf("%w at %s: compress works on a branch", ErrDetachedHead, cur.Hash.Short())
	}
	if cur.Hash.IsZero() {
		return nil, fmt.Errorf("%w: nothing to compress", ErrUnbornBranch)
	}
	sp, err := compress.FindSpan(tx.Commit, cur.Hash, from, to, cfg.keepLast, func(rev string) (Hash, error) { return t.resolve(tx, rev) })
	if err != nil {
		return nil, err
	}
	chain, commits, first, last := sp.Chain, sp.Commits, sp.First, sp.Last
	texts := make(map[Hash]string)
	items := make([]compress.Item, 0, last-first+1)
	for _, h := range chain[first : last+1] {
		c := commits[h]
		text, err := commitText(tx, c)
		if err != nil {
			return nil, err
		}
		texts[h] = text
		items = append(items, compress.Item{Hash: h, Kind: c.Kind, Role: c.Role, Text: text, Pinned: cfg.pinned[h] || record.Pinned(c.Meta)})
	}
	pr, err := compress.Plan(items, compress.PinFunc(func(it compress.Item) bool {
		return it.Role == RoleSystem && it.Kind == KindMessage
	}))
	if err != nil {
		return nil, err
	}
	tok := cfg.tok()
	plan := &CompressPlan{Head: cur.Hash, plan: pr, start: chain[first], tail: chain[last+1:], Replay: len(chain) - 1 - last,
		Groups: []PlanGroup{}, Dropped: []*CommitInfo{}}
	if first > 0 {
		plan.base = chain[first-1]
	}
	infoOf := func(h Hash) *CommitInfo { return newInfo(h, commits[h], texts[h], nil) }
	for _, g := range pr.Groups {
		pg := PlanGroup{Keep: g.Keep, Tokens: compress.ItemsTokens(tok, g.Items), Commits: []*CommitInfo{}}
		for _, it := range g.Items {
			pg.Commits = append(pg.Commits, infoOf(it.Hash))
		}
		plan.TokensBefore += pg.Tokens
		plan.Groups = append(plan.Groups, pg)
	}
	for _, it := range pr.Dropped {
		plan.Dropped = append(plan.Dropped, infoOf(it.Hash))
	}
	return plan, nil
}

func (c *compressConfig) tok() compress.Tokenizer {
	if c.tokenizer != nil {
		return c.tokenizer
	}
	return compress.Estimator{}
}

// CompressRange replaces the commits from from to to (inclusive, on the
// current branch's first-parent chain; empty from means the root, empty to
// means HEAD, or HEAD~n with KeepLast) with summaries (package compress
// documents the plan and the validated summaries). Pinned
// commits — system messages, commits with "pinned": true metadata, and those
// given with Pin — stay in place; each run of other commits becomes one
// summary commit (kind summary, role system) whose metadata lists its sources,
// the estimated tokens before and after, and the attempts. Note and error
// commits in the range are dropped. Commits after to are replayed onto the new
// chain with the same kind, role, text, metadata and time.
//
// Summaries come from the model (or Summaries) and are validated with
// retries whose steering amends the prompt in memory. Nothing is written
// until every summary is accepted; then the new chain, the branch move
// (reflog action "compress"), and ORIG_HEAD are one transaction. If the
// branch moved in the meantime it does not move: the new chain is kept off
// it, recorded in the stranded reflog, and the error is a *ConflictError
// whose Kept is the new chain's tip. The old commits stay in the store as
// an orphan chain. A summary over the message size limit (see Limits) is a
// *TooLargeError, and nothing is written.
func (t *Tract) CompressRange(ctx context.Context, from, to string, opts ...CompressOption) (*CompressResult, error) {
	cfg := t.compressConfig(opts)
	plan, err := t.PlanCompress(ctx, from, to, opts...)
	if err != nil {
		return nil, err
	}
	n := plan.Summarized()
	if cfg.contents != nil && len(cfg.contents) != n {
		return nil, fmt.Errorf("compress: %w: %s given for %s to summarize",
			ErrSummaryCount, english.Count(len(cfg.contents), "summary", "summaries"), english.Count(n, "group", "groups"))
	}
	for i, text := range cfg.contents {
		// An empty Content means "ask the model" to compress.Summarize.
		if text == "" {
			return nil, fmt.Errorf("compress: summary %d of %d given is empty (%w); nothing was written", i+1, n, ErrInvalidText)
		}
		if err := t.limits.CheckText(fmt.Sprintf("summary %d of %d given", i+1, n), text); err != nil {
			return nil, fmt.Errorf("compress: %w", err)
		}
	}
	if cfg.contents == nil && cfg.client == nil {
		return nil, fmt.Errorf("compress: %w: pass tract.WithClient to Open, tract.SummaryClient, or the summaries themselves", ErrNoClient)
	}
	res := &CompressResult{OldHead: plan.Head, TokensBefore: plan.TokensBefore, TokensEstimated: cfg.tokenizer == nil,
		Summaries: []Hash{}, Sources: []Hash{}, Dropped: []Hash{}, Kept: []Hash{}}
	scfg := compress.Config{
		Client: cfg.client, Model: cfg.model, Schema: cfg.schema, TargetTokens: cfg.target, Tolerance: cfg.tolerance,
		Instructions: cfg.instructions, MaxAttempts: cfg.maxAttempts, Tokenizer: cfg.tok(),
	}
	if len(cfg.validators) == 1 {
		scfg.Validator = cfg.validators[0]
	} else if len(cfg.validators) > 1 {
		scfg.Validator = retry.All(cfg.validators...)
	}
	check := func(text string) error { return t.limits.CheckText("the summary", text) }
	summaries, err := compress.SummarizeRange(ctx, plan.plan.Groups, scfg, cfg.contents, check, cfg.onGroup, res)
	if err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	err = t.updateAdvancing(ctx, func(tx store.Tx) (*ConflictError, error) {
		return t.writeCompressed(tx, plan, summaries, res)
	})
	if err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	for _, it := range plan.plan.Dropped {
		res.Dropped = append(res.Dropped, it.Hash)
	}
	return res, nil
}

// writeCompressed commits the new chain and moves the branch, in tx; when
// the branch moved since the plan, it keeps the chain off the branch and
// returns the conflict.
func (t *Tract) writeCompressed(tx store.Tx, plan *CompressPlan, summaries []*compress.Summary, res *CompressResult) (*ConflictError, error) {
	cur, err := t.requireBranch(tx)
	if err != nil {
		return nil, err
	}
	need := compress.Needed(plan.plan.Groups, summaries, plan.tail)
	read, err := store.ReadCommitsStored(tx, need) // in one read: a page of round trips on a database, not one each
	if err != nil {
		return nil, err
	}
	commits := make(map[Hash]*dag.Commit, len(need))
	for i, h := range need {
		commits[h] = read[i]
	}
	ch, err := compress.Rebuild(plan.base, plan.plan.Groups, summaries, plan.tail, commits, res.TokensEstimated)
	if err != nil {
		return nil, err
	}
	batch := make([]store.NewCommit, 0, len(ch.Commits))
	for _, c := range ch.Commits {
		batch = append(batch, store.NewCommit{Hash: c.Hash, Commit: c.Commit})
	}
	blobs := make([]store.NewBlob, 0, len(ch.Blobs))
	for _, b := range ch.Blobs {
		blobs = append(blobs, store.NewBlob{Hash: b.Hash, Data: b.Data})
	}
	res.Summaries = append(res.Summaries, ch.Summaries...)
	res.Sources = append(res.Sources, ch.Sources...)
	res.Replayed = len(plan.tail)
	res.NewHead = ch.Tip
	if err := store.PutChain(tx, t.now(), batch, blobs); err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("compress: %s into %s, %d replayed", english.Count(len(res.Sources), "commit", "commits"),
		english.Count(len(res.Summaries), "summary", "summaries"), res.Replayed)
	conflict, err := t.land(tx, cur, plan.Head, ch.Tip, refs.ActionCompress, msg, "compressed chain")
	if conflict != nil || err != nil {
		return conflict, err
	}
	return nil, setOrigHead(tx, plan.Head)
}
