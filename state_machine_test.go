package tract_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/compress"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// TestModel runs random sequences of operations through the public API —
// commits of every kind, CommitMany, imports (some written as packs),
// branches, checkout and switch, soft and hard resets, commits and resets
// through OnBranch views, validated chats and generations with scripted
// answers, compression, gc and reopening — and after every step compares
// the repository with a model of it kept in plain maps
// (model_state_test.go; the comparison is model_check_test.go): every ref
// and HEAD, the commits each reaches, LogAll, Log, Compile, Status, every
// reflog, and Fsck. The model computes everything from its own records;
// the one thing it asks of a library is the json validator's diagnosis
// of a rejected answer, which tract writes into steering messages.
//
// By default it runs a few hundred steps over fixed seeds. TRACT_STRESS=1
// runs many more seeds, picked afresh, with longer runs; TRACT_SEED=N
// replays one seed and TRACT_STEPS=N sets the steps per seed. A failure
// prints the seed, the steps that led to it and how to replay it.
func TestModel(t *testing.T) {
	seeds, steps := modelSeeds(t)
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			newModelRun(t, seed).run(steps)
		})
	}
}

// modelSeeds reads the seeds and the steps per seed from the environment.
func modelSeeds(t *testing.T) (seeds []uint64, steps int) {
	seeds, steps = []uint64{1, 2, 3, 4}, 75
	if os.Getenv("TRACT_STRESS") != "" {
		base := uint64(time.Now().UnixNano()) % 1_000_000_000
		seeds, steps = nil, 1000
		for i := range uint64(20) {
			seeds = append(seeds, base+i)
		}
		t.Logf("stress: %d seeds from %d, %d steps each", len(seeds), base, steps)
	}
	if s := os.Getenv("TRACT_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "TRACT_SEED")
		seeds = []uint64{seed}
	}
	if s := os.Getenv("TRACT_STEPS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "TRACT_STEPS")
		steps = n
	}
	return seeds, steps
}

// modelRun is one seed's run: the repository, its model, and the steps.
type modelRun struct {
	t     *testing.T
	seed  uint64
	rng   *rand.Rand
	ctx   context.Context
	path  string
	clock *modelClock
	srv   *llmtest.Server
	llm   llm.Client
	tr    *tract.Tract
	m     *repoModel

	step     int
	seq      int           // texts made in this step
	history  []string      // what each step did, for the failure report
	rec      *stepRecorder // the failures of the step under way
	requests int           // model requests already checked
}

func newModelRun(t *testing.T, seed uint64) *modelRun {
	r := &modelRun{
		t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x7472616374)), ctx: context.Background(),
		path: filepath.Join(t.TempDir(), "tract.db"), clock: newModelClock(), m: newRepoModel(),
	}
	r.srv = llmtest.NewServer(t)
	client, err := llm.NewOpenAI(llm.WithBaseURL(r.srv.URL()), llm.WithModel("model-test"),
		llm.WithSleep(func(context.Context, time.Duration) error { return nil }))
	require.NoError(t, err)
	r.llm = client
	r.tr, err = tract.Init(r.path, r.options()...)
	require.NoError(t, err)
	t.Cleanup(func() { r.tr.Close() })
	return r
}

func (r *modelRun) options() []tract.Option {
	return []tract.Option{tract.WithNoSync(), tract.WithClock(r.clock.now), tract.WithClient(r.llm)}
}

// modelOp is one kind of step, picked with its weight.
type modelOp struct {
	name   string
	weight int
	run    func(r *modelRun)
}

var modelOps = []modelOp{
	{"commit", 22, (*modelRun).opCommit},
	{"commit-many", 5, (*modelRun).opCommitMany},
	{"import", 4, (*modelRun).opImport},
	{"branch", 5, (*modelRun).opCreateBranch},
	{"branch-delete", 3, (*modelRun).opDeleteBranch},
	{"checkout", 6, (*modelRun).opCheckout},
	{"switch", 3, (*modelRun).opSwitch},
	{"reset-soft", 5, func(r *modelRun) { r.opReset(tract.Soft) }},
	{"reset-hard", 2, func(r *modelRun) { r.opReset(tract.Hard) }},
	{"chat", 10, func(r *modelRun) { r.opChat(false) }},
	{"generate", 2, func(r *modelRun) { r.opChat(true) }},
	{"compress", 4, (*modelRun).opCompress},
	{"gc", 3, (*modelRun).opGC},
	{"reopen", 2, (*modelRun).opReopen},
	{"view", 4, (*modelRun).opView},
}

// pickOp picks the next step. On a detached HEAD, where most steps can
// only fail, switching back to a branch is more likely.
func (r *modelRun) pickOp() modelOp {
	weight := func(op modelOp) int {
		if op.name == "switch" && r.m.head == "" {
			return 4 * op.weight
		}
		return op.weight
	}
	total := 0
	for _, op := range modelOps {
		total += weight(op)
	}
	n := r.rng.IntN(total)
	for _, op := range modelOps {
		if n < weight(op) {
			return op
		}
		n -= weight(op)
	}
	panic("unreachable")
}

func (r *modelRun) run(steps int) {
	r.runStep("check the new repository", func() {})
	for range steps {
		op := r.pickOp()
		r.runStep(op.name, func() { op.run(r) })
	}
}

// runStep runs one step and checks the repository against the model; the
// first step whose checks fail ends the run with the report.
func (r *modelRun) runStep(name string, do func()) {
	r.step++
	r.seq = 0
	r.clock.setStep(r.step)
	r.rec = &stepRecorder{}
	r.history = append(r.history, fmt.Sprintf("%4d %s:", r.step, name))
	func() {
		defer func() {
			if p := recover(); p != nil && p != errStepFailed {
				r.rec.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		do()
		r.check()
	}()
	if len(r.rec.failures) > 0 {
		r.t.Fatal(r.report())
	}
}

// say adds to the history line of the step under way.
func (r *modelRun) say(format string, args ...any) {
	r.history[len(r.history)-1] += " " + fmt.Sprintf(format, args...)
}

func (r *modelRun) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model test failed: seed %d, step %d\nreplay: TRACT_SEED=%d TRACT_STEPS=%d go test -run 'TestModel$' .\nsteps:\n",
		r.seed, r.step, r.seed, r.step)
	for _, h := range r.history {
		b.WriteString("  " + h + "\n")
	}
	b.WriteString("failures:\n")
	for _, f := range r.rec.failures {
		b.WriteString("  - " + strings.ReplaceAll(f, "\n", "\n    ") + "\n")
	}
	return b.String()
}

// stepRecorder collects one step's failed checks (testify's assert and
// require write to it), so the run can report them with its history.
type stepRecorder struct{ failures []string }

// errStepFailed stops a step at a failed require.
var errStepFailed = errors.New("step failed")

func (s *stepRecorder) Errorf(format string, args ...any) {
	msg := strings.TrimSpace(fmt.Sprintf(format, args...))
	// testify's call stack says nothing the step history does not.
	if i, j := strings.Index(msg, "Error Trace:"), strings.Index(msg, "Error:"); i >= 0 && j > i {
		msg = msg[:i] + msg[j:]
	}
	s.failures = append(s.failures, msg)
}
func (s *stepRecorder) FailNow() { panic(errStepFailed) }
func (s *stepRecorder) Helper()  {}

// ---- what the steps are made of

// text returns a new commit text, unique in the run: mostly a line, now
// and then several lines, non-ASCII text or a few kilobytes. Every text is
// at least 20 characters, longer than any summary a step gives.
func (r *modelRun) text(what string) string {
	r.seq++
	base := fmt.Sprintf("s%d.%d %s text", r.step, r.seq, what)
	switch r.rng.IntN(25) {
	case 0:
		return base + "\nsecond line\n\tthird line"
	case 1:
		return base + " — ünïcödé ✓ 日本語 🙂"
	case 2:
		return base + strings.Repeat(" lorem ipsum", 200+r.rng.IntN(1500))
	}
	return base
}

var (
	modelKinds = []tract.Kind{tract.KindMessage, tract.KindMessage, tract.KindMessage, tract.KindNote, tract.KindSteering, tract.KindSummary, tract.KindError}
	modelRoles = []tract.Role{tract.RoleUser, tract.RoleAssistant, tract.RoleSystem, tract.RoleTool}
	// modelBranches are the names steps create, switch to and delete.
	modelBranches = []string{"main", "br-a", "br-b", "topic/x", "topic/y"}
)

func (r *modelRun) kindRole() (tract.Kind, tract.Role) {
	return modelKinds[r.rng.IntN(len(modelKinds))], modelRoles[r.rng.IntN(len(modelRoles))]
}

// meta returns metadata for a commit now and then (nil otherwise).
func (r *modelRun) meta() map[string]any {
	if r.rng.IntN(4) != 0 {
		return nil
	}
	return map[string]any{"step": float64(r.step), "tag": "t" + strconv.Itoa(r.rng.IntN(10))}
}

func metaJSON(m map[string]any) json.RawMessage {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	return b
}

// anyCommit returns a random commit of the repository (nil when empty).
func (r *modelRun) anyCommit() *mCommit {
	if len(r.m.commits) == 0 {
		return nil
	}
	return r.m.commits[r.rng.IntN(len(r.m.commits))]
}

// target picks a commit to move to: mostly one near HEAD, else any.
func (r *modelRun) target() *mCommit {
	if tip := r.m.tip(); tip != nil && r.rng.IntN(2) == 0 {
		return ancestor(tip, r.rng.IntN(4))
	}
	return r.anyCommit()
}

// rev names c in one of the revision forms: a full or abbreviated hash, a
// branch at it (with branch set), HEAD~N or HEAD^ when c is on HEAD's
// chain.
func (r *modelRun) rev(c *mCommit, branch bool) string { return r.revFrom(c, branch, r.m.tip()) }

// revFrom is rev where HEAD means head (a view's branch).
func (r *modelRun) revFrom(c *mCommit, branch bool, head *mCommit) string {
	var forms []string
	forms = append(forms, c.hash.String(), c.hash.String()[:12])
	if branch {
		for _, n := range r.m.branchNames() {
			if r.m.branches[n] == c {
				forms = append(forms, n)
			}
		}
	}
	for n, x := 0, head; x != nil && n < 8; n, x = n+1, x.parent {
		if x == c {
			forms = append(forms, "HEAD~"+strconv.Itoa(n))
			if n == 1 {
				forms = append(forms, "HEAD^")
			}
			break
		}
	}
	return forms[r.rng.IntN(len(forms))]
}

// bind records that model commit c is tract's commit h, or checks it.
func (r *modelRun) bind(c *mCommit, h tract.Hash) {
	switch {
	case h.IsZero():
		r.rec.Errorf("%s: tract returned no hash", c.describe())
	case c.hash.IsZero():
		if other := r.m.byHash(h); other != nil {
			r.rec.Errorf("%s got the hash %s of %s", c.describe(), h.Short(), other.describe())
		}
		c.hash = h
	case c.hash != h:
		r.rec.Errorf("%s: tract says its hash is %s", c.describe(), h.Short())
	}
}

// expectError checks that an operation the model says must fail failed,
// with one of targets in its chain (none: any error will do). An
// operation wrong in several ways may report any of them.
func (r *modelRun) expectError(err error, targets ...error) {
	if !assert.Error(r.rec, err, "the operation should fail") {
		return
	}
	r.say("→ error (as expected): %v", err)
	for _, target := range targets {
		if errors.Is(err, target) {
			return
		}
	}
	if len(targets) > 0 {
		r.rec.Errorf("the error %q is none of %v", err, targets)
	}
}

// ---- the steps

func (r *modelRun) opCommit() {
	kind, role := r.kindRole()
	text := r.text(string(kind) + " " + string(role))
	meta := r.meta()
	var opts []tract.CommitOption
	if meta != nil {
		opts = append(opts, tract.WithMeta(meta))
	}
	action := "commit"
	if r.rng.IntN(10) == 0 {
		action = "annotate"
		opts = append(opts, tract.WithReflogMessage(action, "annotate: step "+strconv.Itoa(r.step)))
	}
	if r.rng.IntN(30) == 0 {
		text = ""
	}
	r.say("%s/%s %q", kind, role, shortText(text))
	h, err := r.tr.Commit(r.ctx, kind, role, text, opts...)
	switch {
	case text == "" && r.m.head == "":
		r.expectError(err, tract.ErrInvalidText, tract.ErrDetachedHead)
		return
	case text == "":
		r.expectError(err, tract.ErrInvalidText)
		return
	case r.m.head == "":
		r.expectError(err, tract.ErrDetachedHead)
		return
	}
	require.NoError(r.rec, err)
	c := r.m.newCommit(r.m.tip(), kind, role, text, r.step)
	c.meta = meta
	r.bind(c, h)
	msg := ""
	if action != "commit" {
		msg = "annotate: step " + strconv.Itoa(r.step)
	}
	r.m.move(c, action, msg, r.step)
	r.say("→ %s", c)
}

// messages returns n messages to commit in bulk; with bad set, one of
// them is invalid.
func (r *modelRun) messages(n int, bad bool) []tract.ImportMessage {
	msgs := make([]tract.ImportMessage, n)
	for i := range msgs {
		kind, role := r.kindRole()
		msgs[i] = tract.ImportMessage{Kind: kind, Role: role, Content: r.text(string(kind) + " " + string(role)), Meta: metaJSON(r.meta())}
		if kind == tract.KindMessage && r.rng.IntN(2) == 0 {
			msgs[i].Kind = "" // the default kind
		}
	}
	if bad {
		msgs[r.rng.IntN(n)].Role = "robot"
	}
	return msgs
}

// appendMessages adds committed messages to the model on HEAD's branch.
func (r *modelRun) appendMessages(msgs []tract.ImportMessage) []*mCommit {
	var out []*mCommit
	parent := r.m.tip()
	for _, msg := range msgs {
		kind := msg.Kind
		if kind == "" {
			kind = tract.KindMessage
		}
		c := r.m.newCommit(parent, kind, msg.Role, msg.Content, r.step)
		if msg.Meta != nil {
			require.NoError(r.rec, json.Unmarshal(msg.Meta, &c.meta))
		}
		out = append(out, c)
		parent = c
	}
	return out
}

func (r *modelRun) opCommitMany() {
	bad := r.rng.IntN(12) == 0
	msgs := r.messages(1+r.rng.IntN(8), bad)
	r.say("%d messages (bad %v)", len(msgs), bad)
	hs, err := r.tr.CommitMany(r.ctx, msgs)
	switch {
	case bad:
		r.expectError(err)
		return
	case r.m.head == "":
		r.expectError(err, tract.ErrDetachedHead)
		return
	}
	require.NoError(r.rec, err)
	cs := r.appendMessages(msgs)
	require.Len(r.rec, hs, len(cs))
	for i, c := range cs {
		r.bind(c, hs[i])
	}
	r.m.move(cs[len(cs)-1], "commit", "commit: "+english.Count(len(cs), "commit", "commits"), r.step)
	r.say("→ %s..%s", cs[0], cs[len(cs)-1])
}

// opImport imports a conversation, now and then in batches so small that
// it is written as a pack over several transactions.
func (r *modelRun) opImport() {
	bad := r.rng.IntN(10) == 0
	var opts []tract.ImportOption
	batch := 0
	if r.rng.IntN(2) == 0 {
		batch = 1 + r.rng.IntN(4)
		opts = append(opts, tract.ImportBatch(batch, 0))
	}
	msgs := r.messages(1+r.rng.IntN(12), bad)
	r.say("%d messages, batch %d (bad %v)", len(msgs), batch, bad)
	res, err := r.tr.ImportSeq(r.ctx, importSeq(msgs), opts...)
	switch {
	case bad:
		r.expectError(err)
		return
	case r.m.head == "":
		r.expectError(err, tract.ErrDetachedHead)
		return
	}
	require.NoError(r.rec, err)
	cs := r.appendMessages(msgs)
	assert.Equal(r.rec, len(cs), res.Messages, "messages imported")
	r.bind(cs[len(cs)-1], res.Tip)
	r.m.move(cs[len(cs)-1], "import", "import: "+english.Count(len(cs), "commit", "commits"), r.step)
	r.say("→ %s..%s", cs[0], cs[len(cs)-1])
}

func importSeq(msgs []tract.ImportMessage) func(yield func(tract.ImportMessage, error) bool) {
	return func(yield func(tract.ImportMessage, error) bool) {
		for _, m := range msgs {
			if !yield(m, nil) {
				return
			}
		}
	}
}

func (r *modelRun) branchName() string { return modelBranches[r.rng.IntN(len(modelBranches))] }

func (r *modelRun) opCreateBranch() {
	name := r.branchName()
	if r.rng.IntN(15) == 0 {
		name = "bad..name"
	}
	at, rev := r.m.tip(), ""
	if c := r.target(); c != nil && r.rng.IntN(2) == 0 {
		at, rev = c, r.rev(c, true)
	}
	r.say("%s at %q (%s)", name, rev, at)
	h, err := r.tr.CreateBranch(r.ctx, name, rev)
	switch {
	case name == "bad..name":
		r.expectError(err, tract.ErrInvalidBranchName)
		return
	case r.m.branches[name] != nil:
		r.expectError(err, tract.ErrBranchExists)
		return
	case at == nil:
		r.expectError(err, tract.ErrUnbornBranch)
		return
	}
	require.NoError(r.rec, err)
	assert.Equal(r.rec, at.hash, h)
	r.m.branches[name] = at
	r.m.reflogs[branchRef(name)] = []mEntry{{new: at, action: "branch", step: r.step}}
	delete(r.m.gone, name)
}

func (r *modelRun) opDeleteBranch() {
	name := r.branchName()
	r.say("%s", name)
	h, err := r.tr.DeleteBranch(r.ctx, name)
	was := r.m.branches[name]
	switch {
	case was == nil:
		r.expectError(err, tract.ErrBranchNotFound)
		return
	case name == r.m.head:
		r.expectError(err, tract.ErrCurrentBranch)
		return
	}
	require.NoError(r.rec, err)
	assert.Equal(r.rec, was.hash, h)
	delete(r.m.branches, name)
	delete(r.m.reflogs, branchRef(name))
	r.m.gone[name] = true
	r.m.appendEntry("HEAD", mEntry{old: was, new: r.m.tip(), action: "branch", step: r.step})
}

// attach puts HEAD on branch name, as Checkout and Switch do.
func (r *modelRun) attach(name string) {
	r.m.appendEntry("HEAD", mEntry{old: r.m.tip(), new: r.m.branches[name], action: "checkout", step: r.step})
	r.m.head, r.m.detached = name, nil
}

// opCheckout checks out a branch, or detaches HEAD at a commit.
func (r *modelRun) opCheckout() {
	c := r.target()
	if c == nil || r.rng.IntN(2) == 0 {
		name := r.branchName()
		r.say("branch %s", name)
		_, err := r.tr.Checkout(r.ctx, name)
		if r.m.branches[name] == nil {
			r.expectError(err)
			return
		}
		require.NoError(r.rec, err)
		r.attach(name)
		return
	}
	rev := r.rev(c, false)
	r.say("detach at %q (%s)", rev, c)
	_, err := r.tr.Checkout(r.ctx, rev)
	require.NoError(r.rec, err)
	r.m.appendEntry("HEAD", mEntry{old: r.m.tip(), new: c, action: "checkout", step: r.step})
	r.m.head, r.m.detached = "", c
}

func (r *modelRun) opSwitch() {
	name, create := r.branchName(), r.rng.IntN(2) == 0
	r.say("%s (create %v)", name, create)
	_, err := r.tr.Switch(r.ctx, name, create)
	switch {
	case !create && r.m.branches[name] == nil:
		r.expectError(err, tract.ErrBranchNotFound)
	case !create:
		require.NoError(r.rec, err)
		r.attach(name)
	case r.m.branches[name] != nil:
		r.expectError(err, tract.ErrBranchExists)
	case r.m.tip() == nil:
		// On an unborn branch, HEAD just moves to the new name.
		require.NoError(r.rec, err)
		r.m.head = name
	default:
		require.NoError(r.rec, err)
		tip := r.m.tip()
		r.m.branches[name] = tip
		r.m.reflogs[branchRef(name)] = []mEntry{{new: tip, action: "branch", step: r.step}}
		delete(r.m.gone, name)
		r.attach(name)
	}
}

func (r *modelRun) opReset(mode tract.ResetMode) {
	to := r.target()
	if to == nil || r.rng.IntN(20) == 0 {
		r.say("%s to %q", mode, "HEAD~40")
		_, err := r.tr.Reset(r.ctx, "HEAD~40", mode)
		if to == nil || ancestor(r.m.tip(), 40) == nil {
			r.expectError(err)
			return
		}
		to = ancestor(r.m.tip(), 40)
		require.NoError(r.rec, err)
		r.resetModel("", to, mode, "HEAD~40", nil)
		return
	}
	rev := r.rev(to, true)
	r.say("%s to %q (%s)", mode, rev, to)
	res, err := r.tr.Reset(r.ctx, rev, mode)
	require.NoError(r.rec, err)
	r.resetModel("", to, mode, rev, res)
}

// resetModel moves the model as a reset of a position (see repoModel.at)
// to to does, and checks what the reset reported.
func (r *modelRun) resetModel(pos string, to *mCommit, mode tract.ResetMode, rev string, res *tract.ResetResult) {
	from := r.m.at(pos)
	if res != nil {
		assert.Equal(r.rec, from.hashOrZero(), res.From, "reset from")
		assert.Equal(r.rec, to.hash, res.To, "reset to")
	}
	if from == to {
		r.say("→ nothing to do")
		return
	}
	msg := fmt.Sprintf("reset --%s: moving to %s", mode, rev)
	if mode == tract.Soft {
		r.m.moveAt(pos, to, "reset", msg, r.step)
		orphaned := orphanedBy(from, r.m.reachable())
		if from != nil {
			r.m.origHead = from
		}
		if res != nil {
			assert.Equal(r.rec, orphaned, res.Orphaned, "commits made orphans")
		}
		return
	}
	before := r.m.reachable()
	r.m.moveAt(pos, to, "reset", msg, r.step)
	r.m.origHead = nil
	rm := r.m.hardReset(before)
	r.say("→ erased %d commits", rm.commits)
	if res != nil {
		assert.Equal(r.rec, tract.Removed{Commits: rm.commits, Blobs: rm.blobs, ReflogEntries: rm.entries}, res.Deleted, "erased by the hard reset")
	}
}

func (c *mCommit) hashOrZero() tract.Hash {
	if c == nil {
		return tract.Hash{}
	}
	return c.hash
}

// opView commits or resets through a view of one branch (OnBranch): the
// branch moves, HEAD stays, and HEAD in the view's revisions is the
// branch's tip.
func (r *modelRun) opView() {
	name := "br-b"
	if names := r.m.branchNames(); len(names) > 0 && r.rng.IntN(8) != 0 {
		name = names[r.rng.IntN(len(names))]
	}
	v := r.tr.OnBranch(name)
	// The unborn branch HEAD is on may be committed to through a view.
	exists := r.m.branches[name] != nil || r.m.head == name
	to := r.target()
	if to == nil || r.m.branches[name] == nil || r.rng.IntN(3) != 0 {
		kind, role := r.kindRole()
		text := r.text(string(kind) + " " + string(role) + " on " + name)
		r.say("commit on %s: %s/%s %q", name, kind, role, shortText(text))
		h, err := v.Commit(r.ctx, kind, role, text)
		if !exists {
			r.expectError(err, tract.ErrBranchNotFound)
			return
		}
		require.NoError(r.rec, err)
		c := r.m.newCommit(r.m.at(name), kind, role, text, r.step)
		r.bind(c, h)
		r.m.moveAt(name, c, "commit", "", r.step)
		r.say("→ %s", c)
		return
	}
	mode := tract.Soft
	if r.rng.IntN(4) == 0 {
		mode = tract.Hard
	}
	rev := r.revFrom(to, true, r.m.branches[name])
	r.say("reset %s --%s to %q (%s)", name, mode, rev, to)
	res, err := v.Reset(r.ctx, rev, mode)
	require.NoError(r.rec, err)
	r.resetModel(name, to, mode, rev, res)
}

// chatAnswer returns the model's answer to attempt n of the step: valid
// JSON or not.
func (r *modelRun) chatAnswer(n int, valid bool) string {
	if valid {
		return fmt.Sprintf(`{"step": %d, "attempt": %d}`, r.step, n)
	}
	switch r.rng.IntN(8) {
	case 0:
		return ""
	case 1, 2:
		return fmt.Sprintf(`{"step": %d, "attempt": %d`, r.step, n)
	case 3, 4:
		return fmt.Sprintf("Sure! {step: %d, attempt: %d}", r.step, n)
	}
	return fmt.Sprintf("not json: step %d attempt %d", r.step, n)
}

// diagnosis is what a turn validated with retry.JSON says of a rejected
// answer: the validator's own diagnosis, or tract's for an empty answer.
func (r *modelRun) diagnosis(answer string) string {
	if strings.TrimSpace(answer) == "" {
		return "the answer is empty"
	}
	ok, d, err := retry.JSON().Validate(r.ctx, answer)
	require.NoError(r.rec, err)
	require.False(r.rec, ok, "%q is valid JSON", answer)
	return d
}

// opChat runs a validated turn (Chat, or Generate with generate set)
// against scripted answers: accepted at once, accepted after rejected
// answers, rejected every time, or a model failure after some rejected
// answers; with or without purify, with the default or a custom steering
// prompt.
func (r *modelRun) opChat(generate bool) {
	maxAttempts := r.rng.IntN(4) // 0: the default, 3
	m := choose(maxAttempts == 0, 3, maxAttempts)
	purify := r.rng.IntN(5) != 0
	template := ""
	if r.rng.IntN(3) == 0 {
		template = "Attempt {attempt} of {max_attempts} was rejected: {diagnosis}"
	}
	failures, outcome := 0, ""
	switch r.rng.IntN(7) {
	case 0, 1:
		outcome = "accepted"
	case 2, 3, 4:
		outcome, failures = "accepted", r.rng.IntN(m)
	case 5:
		outcome, failures = "exhausted", m
	default:
		outcome, failures = "model error", r.rng.IntN(m)
	}
	opts := []tract.ChatOption{tract.Validate(retry.JSON()), tract.Purify(purify)}
	if maxAttempts > 0 {
		opts = append(opts, tract.MaxAttempts(maxAttempts))
	}
	if template != "" {
		opts = append(opts, tract.RetryPrompt(template))
	}
	note := r.rng.IntN(4) == 0
	if note {
		opts = append(opts, tract.ProvenanceNote())
	}
	// One system prompt for every turn that gives one: committed only
	// when the context does not have it already.
	const system = "You answer in JSON, and only in JSON."
	withSystem := r.rng.IntN(4) == 0
	if withSystem {
		opts = append(opts, tract.SystemPrompt(system))
	}
	text := r.text("chat question")
	r.say("%s after %d rejected, max %d, purify %v, template %v, note %v, system prompt %v",
		outcome, failures, m, purify, template != "", note, withSystem)

	tip := r.m.tip()
	switch {
	case r.m.head == "":
		_, err := r.chatCall(generate, text, opts)
		r.expectError(err, tract.ErrDetachedHead)
		return
	case generate && tip == nil:
		_, err := r.chatCall(generate, text, opts)
		r.expectError(err, tract.ErrUnbornBranch)
		return
	case generate && len(compileOf(tip)) == 0 && !withSystem:
		// Nothing to send: like Generate on an unborn branch, it must
		// fail before asking the model, and write nothing.
		_, err := r.chatCall(generate, text, opts)
		r.expectError(err)
		r.checkRequests(nil)
		return
	}
	var answers []string
	for n := 1; n <= failures; n++ {
		answers = append(answers, r.chatAnswer(n, false))
		r.srv.Reply(llmtest.Answer(answers[n-1]))
	}
	switch outcome {
	case "accepted":
		answers = append(answers, r.chatAnswer(failures+1, true))
		r.srv.Reply(llmtest.Answer(answers[failures]))
	case "model error":
		r.srv.Reply(llmtest.Unauthorized())
	}
	res, err := r.chatCall(generate, text, opts)
	assert.Zero(r.rec, r.srv.Remaining(), "model answers not asked for")

	// What the turn must have done, step by step.
	restore := tip
	if withSystem && !slices.Contains(compileOf(tip), modelMessage{"system", system}) {
		restore = r.m.newCommit(tip, tract.KindMessage, tract.RoleSystem, system, r.step)
		r.m.move(restore, "commit", "", r.step)
	}
	if !generate {
		restore = r.m.newCommit(restore, tract.KindMessage, tract.RoleUser, text, r.step)
		r.m.move(restore, "commit", "", r.step)
	}
	cur := restore
	var asked [][]modelMessage
	var attempts []*mCommit
	var diagnoses []string
	for n, answer := range answers {
		asked = append(asked, compileOf(cur))
		body := answer
		if strings.TrimSpace(body) == "" {
			body = "(empty answer)"
		}
		a := r.m.newCommit(cur, tract.KindMessage, tract.RoleAssistant, body, r.step)
		r.m.move(a, "commit", "", r.step)
		attempts, cur = append(attempts, a), a
		if n == failures {
			break // accepted
		}
		d := r.diagnosis(answer)
		diagnoses = append(diagnoses, d)
		if n+1 == m {
			break // exhausted
		}
		steer := fmt.Sprintf("Your previous response failed validation: %s\nPlease try again, addressing the issue above.", d)
		if template != "" {
			steer = fmt.Sprintf("Attempt %d of %d was rejected: %s", n+1, m, d)
		}
		s := r.m.newCommit(cur, tract.KindSteering, tract.RoleUser, steer, r.step)
		r.m.move(s, "commit", "", r.step)
		cur = s
	}
	if outcome == "model error" {
		asked = append(asked, compileOf(cur))
	}
	r.checkRequests(asked)

	// How it ended.
	var final *mCommit
	rewind := func(failed int) {
		r.m.move(restore, "purify", "purify: hid "+countAttempts(failed, "failed attempt", "failed attempts"), r.step)
		r.m.origHead = cur
		cur = restore
	}
	purified := false
	switch outcome {
	case "accepted":
		require.NoError(r.rec, err)
		final = attempts[len(attempts)-1]
		if purify && failures > 0 {
			rewind(failures)
			final = r.m.newCommit(restore, tract.KindMessage, tract.RoleAssistant, final.text, r.step)
			r.m.move(final, "commit", "", r.step)
			purified = true
		}
		assert.Equal(r.rec, answers[failures], res.Text, "accepted answer")
		if note {
			what := "passed validation on the first attempt (json)"
			if failures > 0 {
				what = fmt.Sprintf("resolved after %d attempts: %s", failures+1, strings.Join(diagnoses, "; "))
			}
			n := r.m.newCommit(final, tract.KindNote, tract.RoleSystem, what, r.step)
			r.m.move(n, "commit", "", r.step)
		}
	case "exhausted":
		var ex *retry.ExhaustedError
		assert.ErrorAs(r.rec, err, &ex)
		if purify {
			rewind(m)
			final = r.m.newCommit(restore, tract.KindError, tract.RoleAssistant,
				fmt.Sprintf("validation failed after %s; last diagnosis: %s", countAttempts(m, "attempt", "attempts"), diagnoses[m-1]), r.step)
			r.m.move(final, "commit", "", r.step)
			purified = true
		}
	case "model error":
		var auth *llm.AuthError
		assert.ErrorAs(r.rec, err, &auth)
		if purify && cur != restore {
			rewind(failures)
			purified = true
		}
		final = r.m.newCommit(cur, tract.KindError, tract.RoleAssistant, "", r.step)
		final.textPrefix = "model call failed: "
		r.m.move(final, "commit", "", r.step)
	}
	require.NotNil(r.rec, res, "the result comes with the error too")
	if !generate {
		r.bind(restore, res.User)
	}
	require.Len(r.rec, res.History, len(attempts), "attempts in the result")
	for i, a := range attempts {
		r.bind(a, res.History[i].Commit)
		assert.Equal(r.rec, i+1, res.History[i].Number)
		assert.Equal(r.rec, outcome == "accepted" && i == failures, res.History[i].OK, "attempt %d's verdict", i+1)
	}
	assert.Equal(r.rec, len(attempts), res.Attempts, "attempts")
	assert.Equal(r.rec, nonNil(diagnoses), nonNil(res.Diagnoses), "diagnoses")
	assert.Equal(r.rec, purified, res.Purified, "purified")
	if final != nil {
		r.bind(final, res.Commit)
	} else {
		assert.Zero(r.rec, res.Commit, "no commit ends a turn exhausted without purify")
	}
	r.say("→ %s", cur)
}

func (r *modelRun) chatCall(generate bool, text string, opts []tract.ChatOption) (*tract.ChatResult, error) {
	if generate {
		return r.tr.Generate(r.ctx, opts...)
	}
	return r.tr.Chat(r.ctx, text, opts...)
}

// checkRequests checks that the model was asked what the model of the
// repository compiles, request by request.
func (r *modelRun) checkRequests(want [][]modelMessage) {
	reqs := r.srv.Requests()[r.requests:]
	r.requests += len(reqs)
	if !assert.Len(r.rec, reqs, len(want), "model requests") {
		return
	}
	for i, req := range reqs {
		got := make([]modelMessage, len(req.Messages))
		for j, msg := range req.Messages {
			got[j] = modelMessage{msg.Role, msg.Content}
		}
		assert.Equal(r.rec, nonNil(want[i]), got, "request %d", i+1)
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func choose[T any](cond bool, yes, no T) T {
	if cond {
		return yes
	}
	return no
}

// opCompress compresses a range of HEAD's chain, with summaries given,
// answered by the scripted model, or answered invalid first and then
// valid under a JSON validator.
func (r *modelRun) opCompress() {
	tip := r.m.tip()
	tokens := tract.WithTokenizer(compress.TokenizerFunc(utf8.RuneCountInString))
	if tip == nil || r.m.head == "" {
		r.say("with nothing to compress on")
		_, err := r.tr.CompressRange(r.ctx, "", "", tract.Summaries("Σ"), tokens)
		r.expectError(err, choose(tip == nil, tract.ErrUnbornBranch, tract.ErrDetachedHead))
		return
	}
	ch := chainOf(tip)
	first := r.rng.IntN(len(ch))
	last := first + r.rng.IntN(len(ch)-first)
	from, to := r.rev(ch[first], false), r.rev(ch[last], false)
	if first == 0 && r.rng.IntN(2) == 0 {
		from = ""
	}
	if last == len(ch)-1 && r.rng.IntN(2) == 0 {
		to = ""
	}
	reversed := first < last && r.rng.IntN(15) == 0
	if reversed {
		from, to = r.rev(ch[last], false), r.rev(ch[first], false)
	}
	// The plan: system messages stay, notes and errors go, each run of
	// anything else becomes a summary.
	type group struct {
		keep  bool
		items []*mCommit
	}
	var groups []group
	var dropped []*mCommit
	summarized := 0
	for _, c := range ch[first : last+1] {
		switch {
		case c.kind == tract.KindNote || c.kind == tract.KindError:
			dropped = append(dropped, c)
		case c.kind == tract.KindMessage && c.role == tract.RoleSystem:
			groups = append(groups, group{keep: true, items: []*mCommit{c}})
		case len(groups) > 0 && !groups[len(groups)-1].keep:
			groups[len(groups)-1].items = append(groups[len(groups)-1].items, c)
		default:
			groups = append(groups, group{items: []*mCommit{c}})
			summarized++
		}
	}
	mode := []string{"given", "model", "model retried"}[r.rng.IntN(3)]
	// Each summary must be shorter than what it replaces (in the runes
	// the test's tokenizer counts, plus a few per message), which a
	// summary of one short summary may not be: then the compression fails
	// at that group, and nothing is written.
	texts := make([]string, summarized)
	failsAt, k := -1, 0
	for _, g := range groups {
		if g.keep {
			continue
		}
		texts[k] = fmt.Sprintf("Σ%d.%d", r.step, k+1)
		if mode == "model retried" {
			texts[k] = fmt.Sprintf(`{"s":%d}`, k+1)
		}
		sources := 0
		for _, c := range g.items {
			sources += utf8.RuneCountInString(c.text) + compress.MessageOverhead
		}
		if utf8.RuneCountInString(texts[k])+compress.MessageOverhead >= sources && failsAt < 0 {
			failsAt = k
		}
		k++
	}
	r.say("%q..%q (%s..%s), %d groups to summarize, %s, fails at %d", from, to, ch[first], ch[last], summarized, mode, failsAt+1)
	opts := []tract.CompressOption{tokens}
	switch {
	case summarized == 0 || reversed:
		opts = append(opts, tract.Summaries("Σ"))
	case mode == "given":
		opts = append(opts, tract.Summaries(texts...))
	case mode == "model":
		opts = append(opts, tract.SummaryAttempts(1))
		for k, text := range texts {
			r.srv.Reply(llmtest.Answer(text))
			if k == failsAt {
				break
			}
		}
	case mode == "model retried":
		opts = append(opts, tract.ValidateSummaries(retry.JSON()), tract.SummaryAttempts(2))
		for k, text := range texts {
			r.srv.Reply(llmtest.Answer(fmt.Sprintf("Σ%d", k)), llmtest.Answer(text))
			if k == failsAt {
				break
			}
		}
	}
	res, err := r.tr.CompressRange(r.ctx, from, to, opts...)
	assert.Zero(r.rec, r.srv.Remaining(), "model answers not asked for")
	reqs := r.srv.Requests()[r.requests:]
	r.requests += len(reqs)
	switch {
	case reversed:
		r.expectError(err, tract.ErrReversedRange)
		return
	case summarized == 0:
		r.expectError(err, compress.ErrNothingToSummarize)
		return
	case failsAt >= 0:
		r.expectError(err)
		assert.ErrorContains(r.rec, err, "not shorter than its source")
		return
	}
	require.NoError(r.rec, err)

	// The summarization requests carry the texts they summarize.
	if mode != "given" {
		perGroup := choose(mode == "model", 1, 2)
		if assert.Len(r.rec, reqs, summarized*perGroup, "summarization requests") {
			k := 0
			for _, g := range groups {
				if g.keep {
					continue
				}
				body := string(reqs[k*perGroup].Body)
				for _, c := range g.items {
					want, _ := json.Marshal(c.text)
					assert.Contains(r.rec, body, strings.Trim(string(want), `"`), "the request for summary %d carries %s", k+1, c)
				}
				k++
			}
		}
	}

	// The new chain: kept commits in place (made again when what is
	// before them changed), one summary per group, then the commits
	// after the range replayed.
	base := ancestor(ch[first], 1)
	newTip := base
	var made []*mCommit // the commits this compress makes, oldest first
	replay := func(c *mCommit) {
		if c.parent == newTip {
			newTip = c
			return
		}
		n := r.m.newCommit(newTip, c.kind, c.role, c.text, r.step)
		n.textPrefix, n.meta, n.timeOf = c.textPrefix, c.meta, c
		newTip, made = n, append(made, n)
	}
	var summaries, sources []*mCommit
	k = 0
	for _, g := range groups {
		if g.keep {
			replay(g.items[0])
			continue
		}
		s := r.m.newCommit(newTip, tract.KindSummary, tract.RoleSystem, texts[k], r.step)
		s.timeOf = g.items[len(g.items)-1]
		summaries, sources = append(summaries, s), append(sources, g.items...)
		newTip, k, made = s, k+1, append(made, s)
	}
	for _, c := range ch[last+1:] {
		replay(c)
	}
	newTip = r.sameAsBefore(made, newTip, res.NewHead, summaries)
	if assert.Len(r.rec, res.Summaries, len(summaries)) {
		for i, s := range summaries {
			r.bind(s, res.Summaries[i])
		}
	}
	assert.Equal(r.rec, hashes(sources), res.Sources, "sources")
	assert.Equal(r.rec, hashes(dropped), res.Dropped, "dropped")
	assert.Equal(r.rec, len(ch)-1-last, res.Replayed, "replayed")
	assert.Equal(r.rec, tip.hash, res.OldHead, "old head")
	r.bind(newTip, res.NewHead)
	r.m.move(newTip, "compress", "", r.step)
	r.m.origHead = tip
	r.say("→ %s", newTip)
}

// sameAsBefore makes the commits of made (oldest first, each the parent
// of the next, the last tip) that tract made before the commits they
// already are. Compress is deterministic: a summary takes the time of the
// last commit it replaces and a replayed commit keeps its own, so
// compressing again what was compressed before, to the same summaries,
// makes the very same commits (content addressing gives them the same
// hashes), however the model came to them. head is tract's new head;
// summaries (which are among made) are updated in place. It returns the
// tip, which may be an earlier commit now.
func (r *modelRun) sameAsBefore(made []*mCommit, tip *mCommit, head tract.Hash, summaries []*mCommit) *mCommit {
	if len(made) == 0 || head.IsZero() {
		return tip
	}
	cs, err := r.tr.Log(r.ctx, tract.LogFrom(head.String()), tract.LogLimit(len(made)))
	if err != nil || len(cs) != len(made) {
		return tip // the checks that follow report it
	}
	for i, c := range made {
		h := cs[len(cs)-1-i].Hash
		other := r.m.byHash(h)
		if other == nil || other == c {
			continue
		}
		r.say("%s is %s again", c, other)
		r.m.forget(c)
		if i+1 < len(made) {
			made[i+1].parent = other
		}
		for j, s := range summaries {
			if s == c {
				summaries[j] = other
			}
		}
		if tip == c {
			tip = other
		}
		made[i] = other
	}
	return tip
}

func hashes(cs []*mCommit) []tract.Hash {
	out := []tract.Hash{} // as CompressResult lists none: [], not null
	for _, c := range cs {
		out = append(out, c.hash)
	}
	return out
}

// opGC collects garbage with reflog entries expiring after a few steps
// (or the default, which nothing here reaches), now and then as a dry run.
func (r *modelRun) opGC() {
	expiry := []int{-1, 0, 0, 1, 2, 5, 10}[r.rng.IntN(7)]
	dry := r.rng.IntN(6) == 0
	opts := []tract.GCOption{}
	if expiry >= 0 {
		opts = append(opts, tract.GCExpiry(time.Duration(expiry)*time.Minute+30*time.Second))
	}
	if dry {
		opts = append(opts, tract.GCDryRun())
	}
	r.say("expiry %d steps (dry run %v)", expiry, dry)
	got, err := r.tr.GC(r.ctx, opts...)
	require.NoError(r.rec, err)
	m := r.m
	if dry {
		// A copy of the model takes the dry run's changes.
		cp := *r.m
		cp.commits = slices.Clone(m.commits)
		cp.alive = map[*mCommit]bool{}
		cp.reflogs = map[string][]mEntry{}
		for k, v := range m.reflogs {
			cp.reflogs[k] = slices.Clone(v)
		}
		m = &cp
	}
	rm := m.gc(r.step, expiry)
	assert.Equal(r.rec, tract.Removed{Commits: rm.commits, Blobs: rm.blobs, ReflogEntries: rm.entries}, got, "removed")
	r.say("→ removed %d commits", got.Commits)
}

// opReopen closes the repository and opens it again (a new process, to
// the file), or drops the handle's caches.
func (r *modelRun) opReopen() {
	if r.rng.IntN(3) == 0 {
		r.say("drop caches")
		r.tr.DropCaches()
		return
	}
	require.NoError(r.rec, r.tr.Close())
	tr, err := tract.Open(r.path, r.options()...)
	require.NoError(r.rec, err)
	r.tr = tr
}
