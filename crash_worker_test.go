package tract_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store"
)

// crashWorkerEnv, when set, makes the test binary the worker process of
// TestCrash_KillAtRandom instead of running tests: it works on the
// repository TRACT_CRASH_DB (a file's path or a database URL) until it is
// killed, with the run number (its value) and the seed TRACT_CRASH_SEED
// choosing its texts and operations, drawn from those TRACT_CRASH_OPS
// lists (comma-separated names; all when unset).
// TRACT_CRASH_NEXT, "N OP", makes operation N+1 OP, the one the parent
// means to kill.
const crashWorkerEnv = "TRACT_CRASH_WORKER"

// The operations of the crash worker, as its reports name them. "open" is
// the worker opening the repository; "compact" rewrites the file.
const (
	crashOpen       = "open"
	crashCommit     = "commit"
	crashCommitMany = "commit-many"
	// crashCommitGroup is 8 goroutines of the worker committing at once
	// on HEAD's branch: their writes are grouped into shared transactions
	// (see docs/storage.md), and each acknowledges its commits as their
	// Commit calls return, before the operation is done.
	crashCommitGroup = "commit-group"
	crashChat        = "chat"
	crashChatRetry   = "chat-retry"
	crashImport      = "import"
	crashImportPacks = "import-packs"
	crashResetSoft   = "reset-soft"
	crashResetHard   = "reset-hard"
	crashCompress    = "compress"
	crashGC          = "gc"
	crashCompact     = "compact"
)

// crashOp is an operation the worker draws, as often as its weight.
type crashOp struct {
	name   string
	weight int
}

// crashOps are the operations the worker draws from.
var crashOps = []crashOp{
	{crashCommit, 12}, {crashCommitMany, 10}, {crashCommitGroup, 10}, {crashChat, 10}, {crashChatRetry, 10},
	{crashImport, 8}, {crashImportPacks, 8}, {crashResetSoft, 8}, {crashResetHard, 10},
	{crashCompress, 8}, {crashGC, 10}, {crashCompact, 3},
}

// crashErasers are the operations that delete commits, and so may have
// erased acknowledged ones when a kill interrupts them.
var crashErasers = map[string]bool{crashResetHard: true, crashGC: true}

// The worker's report to the parent, one line each on standard output:
//
//	begin OP [HASH…]    OP starts; for an eraser, the commits it may delete
//	ack HASH "TEXT"     a commit the API said it made, with its text (Go
//	                    quoted: a replayed steering text has a newline)
//	erased HASH         a commit an eraser deleted (it was there before the
//	                    call and is gone after it)
//	done OP             the call returned successfully
//	fail MESSAGE        the API failed or broke an invariant; the worker exits
//
// The lines of an operation after its begin are written only after the
// call returned: nothing is reported that the API has not confirmed. A
// last line the kill cut short is no report.
const (
	crashLineBegin  = "begin"
	crashLineAck    = "ack"
	crashLineErased = "erased"
	crashLineDone   = "done"
	crashLineFail   = "fail"
)

// crashAccepted ends every answer the worker's validator accepts.
const crashAccepted = "(accepted)"

// crashTagPrefix starts the tag that makes each text unique (see
// crashWorker.text): "[tc-r0003-n000042]".
const crashTagPrefix = "[tc-r"

// crashTag returns the tag of text n of worker run run.
func crashTag(run, n int) string { return fmt.Sprintf("%s%04d-n%06d]", crashTagPrefix, run, n) }

// crashTagLen is the length of every tag.
var crashTagLen = len(crashTag(0, 0))

// crashWords fill the texts between their tags.
var crashWords = strings.Fields(`ledger orbit quartz maple signal harbor velvet cinder
	lantern meadow copper falcon glacier thimble saffron beacon willow prism tundra
	ember cobalt juniper mosaic nectar onyx pebble quiver ripple summit timber`)

// crashWorker is the worker process's state.
type crashWorker struct {
	ctx context.Context
	rng *rand.Rand
	run int
	n   int // texts made so far
	out *bufio.Writer
	tr  *tract.Tract
	srv *llmtest.Server
}

// runCrashWorker works on the repository until it is killed (or fails).
func runCrashWorker() int {
	run, err := strconv.Atoi(os.Getenv(crashWorkerEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash worker:", err)
		return 2
	}
	seed, err := strconv.ParseUint(os.Getenv("TRACT_CRASH_SEED"), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash worker: TRACT_CRASH_SEED:", err)
		return 2
	}
	w := &crashWorker{
		ctx: context.Background(),
		rng: rand.New(rand.NewPCG(seed, uint64(run))),
		run: run,
		out: bufio.NewWriterSize(os.Stdout, 1<<16),
		srv: llmtest.New(),
	}
	defer w.srv.Close()
	if err := w.work(os.Getenv("TRACT_CRASH_DB")); err != nil {
		fmt.Fprintf(w.out, "%s %s\n", crashLineFail, strings.ReplaceAll(err.Error(), "\n", " | "))
		w.out.Flush()
		return 1
	}
	return 0
}

// work opens the repository and runs operations drawn at random forever.
func (w *crashWorker) work(path string) error {
	client, err := llm.NewOpenAI(llm.WithBaseURL(w.srv.URL()), llm.WithModel("crash-model"), llm.WithMaxRetries(0))
	if err != nil {
		return err
	}
	// Each run's clock is two hours ahead of the last one's, so that GC
	// finds the packs of imports killed in earlier runs abandoned and drops
	// them. Every write is synced: no WithNoSync.
	shift := time.Duration(w.run) * 2 * time.Hour
	w.begin(crashOpen)
	// Texts are kept compressed, as they are by default: the harness
	// finds live texts (its control) and looks for erased ones in the raw
	// bytes and in what they decode to.
	w.tr, err = tract.Open(path, tract.WithClient(client), tract.WithClock(func() time.Time { return time.Now().Add(shift) }))
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	w.done(crashOpen)
	var skip int
	var next string
	if plan := os.Getenv("TRACT_CRASH_NEXT"); plan != "" {
		if _, err := fmt.Sscanf(plan, "%d %s", &skip, &next); err != nil {
			return fmt.Errorf("TRACT_CRASH_NEXT=%q: %w", plan, err)
		}
	}
	ops := crashOps
	if names := os.Getenv("TRACT_CRASH_OPS"); names != "" {
		allowed := strings.Split(names, ",")
		ops = slices.DeleteFunc(slices.Clone(ops), func(o crashOp) bool { return !slices.Contains(allowed, o.name) })
	}
	total := 0
	for _, op := range ops {
		total += op.weight
	}
	for i := 0; ; i++ {
		op := next
		if i != skip || op == "" {
			pick := w.rng.IntN(total)
			for _, o := range ops {
				if pick -= o.weight; pick < 0 {
					op = o.name
					break
				}
			}
		}
		if err := w.do(op); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
}

// do runs one operation, falling back to commit-many when the branch is
// too short for the one drawn.
func (w *crashWorker) do(op string) error {
	switch op {
	case crashCommit:
		return w.commit()
	case crashCommitMany:
		return w.commitMany()
	case crashCommitGroup:
		return w.commitGroup()
	case crashChat:
		return w.chat(op, 0)
	case crashChatRetry:
		return w.chat(op, 1+w.rng.IntN(2))
	case crashImport:
		return w.importMessages(op, 2+w.rng.IntN(30), nil)
	case crashImportPacks:
		return w.importMessages(op, 20+w.rng.IntN(80), []tract.ImportOption{tract.ImportBatch(4+w.rng.IntN(8), 1024+w.rng.IntN(4096))})
	case crashResetSoft, crashResetHard:
		return w.reset(op)
	case crashCompress:
		return w.compress()
	case crashGC:
		return w.gc()
	case crashCompact:
		w.begin(op)
		if _, err := w.tr.Compact(w.ctx); err != nil {
			return err
		}
		w.done(op)
		return nil
	}
	return fmt.Errorf("unknown operation %q", op)
}

// text returns a new text, unique in the repository: its tag, repeated
// every few words, so that any fragment of it longer than about 80 bytes
// still holds the whole tag. One text in eight is several kilobytes long
// (bbolt's overflow pages).
func (w *crashWorker) text() string {
	size := 40 + w.rng.IntN(300)
	if w.rng.IntN(8) == 0 {
		size = 2000 + w.rng.IntN(8000)
	}
	return w.textOf(size)
}

// textOf returns a new text of about size bytes (one tag and six words at
// least).
func (w *crashWorker) textOf(size int) string {
	w.n++
	tag := crashTag(w.run, w.n)
	var b strings.Builder
	for b.Len() == 0 || b.Len() < size {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(tag)
		for range 6 {
			b.WriteByte(' ')
			b.WriteString(crashWords[w.rng.IntN(len(crashWords))])
		}
	}
	return b.String()
}

func (w *crashWorker) messages(n int) []tract.ImportMessage {
	msgs := make([]tract.ImportMessage, n)
	for i := range msgs {
		role := tract.RoleUser
		if i%2 == 1 {
			role = tract.RoleAssistant
		}
		msgs[i] = tract.ImportMessage{Role: role, Content: w.text()}
	}
	return msgs
}

// begin reports that op starts, with the commits it may delete, and makes
// sure the parent can read it before the operation runs.
func (w *crashWorker) begin(op string, mayErase ...tract.Hash) {
	w.out.WriteString(crashLineBegin + " " + op)
	for _, h := range mayErase {
		w.out.WriteString(" " + h.String())
	}
	w.out.WriteByte('\n')
	w.out.Flush()
}

// ack reports a commit the API made; it is written with done.
func (w *crashWorker) ack(h tract.Hash, text string) {
	fmt.Fprintf(w.out, "%s %s %q\n", crashLineAck, h, text)
}

// done reports that op returned, with the acks and erasures before it.
func (w *crashWorker) done(op string) {
	fmt.Fprintf(w.out, "%s %s\n", crashLineDone, op)
	w.out.Flush()
}

func (w *crashWorker) commit() error {
	role := tract.RoleUser
	if w.rng.IntN(2) == 0 {
		role = tract.RoleAssistant
	}
	text := w.text()
	w.begin(crashCommit)
	h, err := w.tr.Commit(w.ctx, tract.KindMessage, role, text)
	if err != nil {
		return err
	}
	w.ack(h, text)
	w.done(crashCommit)
	return nil
}

func (w *crashWorker) commitMany() error {
	n := 2 + w.rng.IntN(20)
	if w.rng.IntN(4) == 0 {
		n = 64 + w.rng.IntN(200) // a pack of its own, and its merges
	}
	msgs := w.messages(n)
	w.begin(crashCommitMany)
	hs, err := w.tr.CommitMany(w.ctx, msgs)
	if err != nil {
		return err
	}
	if len(hs) != len(msgs) {
		return fmt.Errorf("%d hashes for %d messages", len(hs), len(msgs))
	}
	for i, h := range hs {
		w.ack(h, msgs[i].Content)
	}
	w.done(crashCommitMany)
	return nil
}

// commitGroup has 8 goroutines make 1 to 8 commits each on HEAD's branch
// at once, each commit reported (and flushed) as soon as its Commit call
// returns: a kill during the operation finds every one of those.
func (w *crashWorker) commitGroup() error {
	const writers = 8
	texts := make([][]string, writers)
	for g := range texts {
		for range 1 + w.rng.IntN(8) {
			texts[g] = append(texts[g], w.text())
		}
	}
	w.begin(crashCommitGroup)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, text := range texts[g] {
				h, err := w.tr.Commit(w.ctx, tract.KindMessage, tract.RoleUser, text)
				if err != nil {
					errs[g] = err
					return
				}
				mu.Lock()
				w.ack(h, text)
				w.out.Flush()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	w.done(crashCommitGroup)
	return nil
}

// chat runs a validated turn whose first rejected answers are rejected
// (each followed by steering), then accepted and, after rejections,
// purified.
func (w *crashWorker) chat(op string, rejected int) error {
	prompt := w.text()
	for range rejected {
		w.srv.Reply(llmtest.Answer(w.text()))
	}
	accepted := w.text() + " " + crashAccepted
	w.srv.Reply(llmtest.Answer(accepted))
	v := retry.ValidatorFunc("accepted", func(_ context.Context, answer string) (bool, string, error) {
		if strings.HasSuffix(answer, crashAccepted) {
			return true, "", nil
		}
		return false, "the answer does not end in " + crashAccepted, nil
	})
	w.begin(op)
	res, err := w.tr.Chat(w.ctx, prompt, tract.Validate(v), tract.MaxAttempts(rejected+1))
	if err != nil {
		return err
	}
	if res.Text != accepted || res.Attempts != rejected+1 || res.Purified != (rejected > 0) || len(res.History) != rejected+1 {
		return fmt.Errorf("turn of %d rejected answers: accepted %q after %d attempts (purified %v, %d in history)",
			rejected, res.Text, res.Attempts, res.Purified, len(res.History))
	}
	w.ack(res.User, prompt)
	for _, a := range res.History {
		w.ack(a.Commit, a.Text)
	}
	w.ack(res.Commit, res.Text)
	w.done(op)
	return nil
}

// importMessages imports n messages, in one transaction or, with small
// batches, through a pack written over several (in one transaction
// again on a store that takes a pack whole).
func (w *crashWorker) importMessages(op string, n int, opts []tract.ImportOption) error {
	msgs := w.messages(n)
	w.begin(op)
	res, err := w.tr.ImportSeq(w.ctx, func(yield func(tract.ImportMessage, error) bool) {
		for _, m := range msgs {
			if !yield(m, nil) {
				return
			}
		}
	}, opts...)
	if err != nil {
		return err
	}
	// A store that takes an import whole writes it in the transaction
	// that lands it (Batches 0); any other, in a pack of several.
	whole := false
	if err := w.tr.Store().View(w.ctx, func(tx store.Tx) error {
		_, whole = tx.(store.PackStreamer)
		return nil
	}); err != nil {
		return err
	}
	if res.Messages != n || (opts != nil && !whole && res.Batches < 2) || (opts != nil && whole && res.Batches != 0) {
		return fmt.Errorf("imported %d of %d messages in %d batches", res.Messages, n, res.Batches)
	}
	log, err := w.tr.Log(w.ctx, tract.LogFrom(res.Tip.String()), tract.LogLimit(n))
	if err != nil {
		return err
	}
	if len(log) != n {
		return fmt.Errorf("the import's tip has %d commits, not %d", len(log), n)
	}
	for i, ci := range log {
		m := msgs[n-1-i]
		if ci.Text != m.Content {
			return fmt.Errorf("imported commit %s holds another text than message %d", ci.Hash.Short(), n-i)
		}
		w.ack(ci.Hash, ci.Text)
	}
	w.done(op)
	return nil
}

// chain returns the hashes of the first-parent chain from rev (from HEAD
// when rev is "", none on an unborn branch), newest first.
func (w *crashWorker) chain(rev string) ([]tract.Hash, error) {
	var opts []tract.LogOption
	if rev != "" {
		opts = append(opts, tract.LogFrom(rev))
	}
	log, err := w.tr.Log(w.ctx, opts...)
	if err != nil {
		return nil, err
	}
	hs := make([]tract.Hash, len(log))
	for i, ci := range log {
		hs[i] = ci.Hash
	}
	return hs, nil
}

// allCommits returns every commit in the repository, and the orphans
// among them.
func (w *crashWorker) allCommits() (all map[tract.Hash]bool, orphans []tract.Hash, err error) {
	o, err := w.tr.Outline(w.ctx)
	if err != nil {
		return nil, nil, err
	}
	all = make(map[tract.Hash]bool, len(o.Commits))
	for _, h := range o.Commits {
		all[h] = true
	}
	for _, ch := range o.Orphans {
		for _, h := range ch.Commits {
			all[h] = true
			orphans = append(orphans, h)
		}
	}
	return all, orphans, nil
}

// erasing runs an erasing operation: it reports as candidates every
// commit that call may delete, then, after it, reports as erased every
// commit that was there before and is gone, and checks that they number
// what the API says it deleted and were all candidates.
func (w *crashWorker) erasing(op string, candidates func(all map[tract.Hash]bool, orphans []tract.Hash) ([]tract.Hash, error), call func() (deleted int, err error)) error {
	before, orphans, err := w.allCommits()
	if err != nil {
		return err
	}
	may, err := candidates(before, orphans)
	if err != nil {
		return err
	}
	mayErase := make(map[tract.Hash]bool, len(may))
	for _, h := range may {
		mayErase[h] = true
	}
	w.begin(op, may...)
	deleted, err := call()
	if err != nil {
		return err
	}
	after, _, err := w.allCommits()
	if err != nil {
		return err
	}
	var erased []tract.Hash
	for h := range before {
		if !after[h] {
			erased = append(erased, h)
			if !mayErase[h] {
				return fmt.Errorf("deleted %s, which it should have kept", h.Short())
			}
		}
	}
	if len(erased) != deleted {
		return fmt.Errorf("says it deleted %d commits, but %d are gone", deleted, len(erased))
	}
	for _, h := range erased {
		fmt.Fprintf(w.out, "%s %s\n", crashLineErased, h)
	}
	w.done(op)
	return nil
}

// reset moves the branch a few commits back, softly or hard.
func (w *crashWorker) reset(op string) error {
	chain, err := w.chain("")
	if err != nil {
		return err
	}
	if len(chain) < 2 {
		return w.commitMany()
	}
	rev := fmt.Sprintf("HEAD~%d", 1+w.rng.IntN(min(len(chain)-1, 8)))
	if op == crashResetSoft {
		w.begin(op)
		if _, err := w.tr.Reset(w.ctx, rev, tract.Soft); err != nil {
			return err
		}
		w.done(op)
		return nil
	}
	// A hard reset deletes what only the commits it leaves behind reach:
	// at most every commit that does not stay on the branch.
	stay, err := w.chain(rev)
	if err != nil {
		return err
	}
	candidates := func(all map[tract.Hash]bool, _ []tract.Hash) ([]tract.Hash, error) {
		may := maps.Clone(all)
		for _, h := range stay {
			delete(may, h)
		}
		return slices.Collect(maps.Keys(may)), nil
	}
	return w.erasing(op, candidates, func() (int, error) {
		res, err := w.tr.Reset(w.ctx, rev, tract.Hard)
		if err != nil {
			return 0, err
		}
		return res.Deleted.Commits, nil
	})
}

// gc collects every orphan: its expiry 0 expires every reflog entry.
func (w *crashWorker) gc() error {
	candidates := func(_ map[tract.Hash]bool, orphans []tract.Hash) ([]tract.Hash, error) { return orphans, nil }
	return w.erasing(crashGC, candidates, func() (int, error) {
		rm, err := w.tr.GC(w.ctx, tract.GCExpiry(0))
		return rm.Commits, err
	})
}

// compress summarizes the branch from its root up to a few commits from
// its tip, with summaries the worker writes, and acknowledges the
// summaries and the commits replayed after them.
func (w *crashWorker) compress() error {
	chain, err := w.chain("")
	if err != nil {
		return err
	}
	keep := 1 + w.rng.IntN(4)
	if len(chain) < keep+3 {
		return w.commitMany()
	}
	to := fmt.Sprintf("HEAD~%d", keep)
	plan, err := w.tr.PlanCompress(w.ctx, "", to)
	if err != nil {
		return err
	}
	// A summary must be shorter than what it replaces: three commits at
	// least, each longer than this.
	summaries := make([]string, plan.Summarized())
	for i := range summaries {
		summaries[i] = w.textOf(0)
	}
	w.begin(crashCompress)
	res, err := w.tr.CompressRange(w.ctx, "", to, tract.Summaries(summaries...))
	if err != nil {
		return err
	}
	if len(res.Summaries) != len(summaries) || res.Replayed != keep {
		return fmt.Errorf("%d summaries for %d given, %d replayed of %d", len(res.Summaries), len(summaries), res.Replayed, keep)
	}
	for i, h := range res.Summaries {
		w.ack(h, summaries[i])
	}
	replayed, err := w.tr.Log(w.ctx, tract.LogFrom(res.NewHead.String()), tract.LogLimit(res.Replayed))
	if err != nil {
		return err
	}
	for _, ci := range replayed {
		w.ack(ci.Hash, ci.Text)
	}
	w.done(crashCompress)
	return nil
}
