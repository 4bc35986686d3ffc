package tract_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// TestCrash_KillAtRandom kills a worker process (this test binary, see
// runCrashWorker) with SIGKILL at random moments while it works on one
// repository through the public API with durable writes: single commits,
// CommitMany, validated chats (accepted at once, or after rejected
// attempts and steering, then purified), imports in one transaction and
// through packs over many, soft and hard resets, a compressed range, GC
// with an expiry that erases every orphan, and Compact. Most kills are
// aimed inside an operation: the parent picks one, waits until the worker
// starts it and kills after a random part of its usual duration.
//
// The worker reports what the API confirmed (see crashLineBegin): the commits
// each call made, with their texts, and the commits each erasing call
// deleted. After each kill the parent opens the repository (the open that
// must finish an erasure the kill interrupted), and checks:
//
//   - Fsck finds no problem;
//   - every acknowledged commit is readable by hash, with its text, unless
//     an acknowledged erasure deleted it, or the erasing call the kill
//     interrupted might have (it was one of the call's candidates);
//   - no commit reported erased is back;
//   - erased texts are gone from the storage. A text is erased when every
//     acknowledged commit that carries it is gone (a purified answer and
//     commits that compress replayed share their text with another
//     commit); from then on no bytes of the .db file, read raw (free pages
//     and all), may be its tag (on PostgreSQL, no value of the
//     repository's rows: see TestCrash_KillAtRandomPostgres). Every text
//     is unique, starts with a tag ("[tc-r0003-n000042]") no other text
//     has, and repeats it every few words, so this also catches a
//     fragment left behind, or a reflog message quoting it.
//     Texts the worker never had acknowledged (an import killed before it
//     published its pack, a commit whose call was killed) are not checked:
//     they may stay in the file until GC drops the abandoned pack and the
//     space is reused. Steering texts carry no tag and are not checked.
//     As a control, the tag of every text some live acknowledged commit
//     still carries must be found.
//
// Then the worker restarts on the same file, so damage accumulates as in
// real life. The test runs 24 kills (6 with -short); TRACT_STRESS=1 runs
// 600. It logs a table (see it with -v) of kills by the operation under
// way, lost commits, and erased texts found, by the operation that erased
// them. The seed is logged; TRACT_SEED=N replays the same draws (the kill
// moments still depend on timing).
func TestCrash_KillAtRandom(t *testing.T) {
	runCrashTest(t, crashFileBackend(t))
}

// TestCrash_KillAtRandomPostgres is TestCrash_KillAtRandom on a repository
// in the PostgreSQL test database (see pgtest), with the same operations
// but Compact, which a database does not have, and the same checks after
// each kill, but that an erased text must be gone from the live rows of
// the repository's tables (every value of every row, read by
// pgtest.Values), not from the disk: the server keeps dead rows' bytes
// until VACUUM, as docs/reliability.md says. Before each check the parent waits
// until the server has ended the killed worker's sessions, so that a
// COMMIT the server received before the kill is either applied or not,
// not applied after the check.
func TestCrash_KillAtRandomPostgres(t *testing.T) {
	runCrashTest(t, crashPostgresBackend(t))
}

// runCrashTest runs the kills of TestCrash_KillAtRandom on backend be.
func runCrashTest(t *testing.T, be *crashBackend) {
	kills := 24
	if os.Getenv("TRACT_STRESS") != "" {
		kills = 600
	} else if testing.Short() {
		kills = 6
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TRACT_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "TRACT_SEED")
	}
	t.Logf("seed %d (TRACT_SEED=%d replays it)", seed, seed)
	t.Logf("backend: %s", be.name)
	h := newCrashHarness(t, seed, be)
	start := time.Now()
	for k := 1; k <= kills && !h.stop; k++ {
		h.killOnce(k)
		h.check(k)
	}
	h.summary(time.Since(start))
}

// crashAck is an acknowledged commit the parent expects to find.
type crashAck struct {
	text string
	tag  string // "" for a text the worker did not make (steering)
	op   string // the operation that acknowledged it
}

// crashGone is a text whose acknowledged commits are all gone.
type crashGone struct {
	op     string // the operation that erased its last acknowledged commit
	killed bool   // op was killed: the check after the kill found it gone
	kill   int    // the kill after which it was gone
	// held is set while a commit the worker never had acknowledged still
	// uses the text's blob (commits a compress replayed before it was
	// killed): the text lives on in it, and is erased only with it.
	held bool
	// erased is set once the blob is gone too: from then on the text must
	// not be in the storage.
	erased bool
	leaked bool // found in the storage since
}

func (g *crashGone) how() string {
	switch {
	case g.held:
		return "the erasure of an unacknowledged copy, after " + g.op
	case g.killed:
		return g.op + " (killed)"
	}
	return g.op
}

// crashOpStats counts, for one operation, the kills while it was under
// way and what the checks found.
type crashOpStats struct {
	kills int // kills while it was under way
	lost  int // acknowledged commits missing after those kills
	// Texts the operation erased when it returned, and of those, how many
	// were found in the file afterwards.
	erased, erasedFound int
	// Texts it erased before a kill interrupted it, and how many of those
	// were found.
	killed, killedFound int
}

// crashHarness is the parent's state across kills.
type crashHarness struct {
	t    testing.TB
	ctx  context.Context
	be   *crashBackend
	ops  []string // the operations the worker draws from
	self string
	seed uint64
	rng  *rand.Rand
	run  int

	live    map[dag.Hash]crashAck // acknowledged commits not erased
	holders map[string]int        // tag → how many live commits carry it
	texts   map[string]string     // tag → text, of every acknowledged text
	gone    map[string]*crashGone // tag → how its text was erased
	erased  []dag.Hash            // reported erased since the last check
	est     map[string]time.Duration

	// The operation under way in the current run, and for an eraser the
	// commits it may delete.
	cur      string
	curCands map[dag.Hash]bool
	curStart time.Time
	started  bool   // the worker reported the start of an operation
	failed   string // the worker's fail line

	stop       bool
	byOp       map[string]*crashOpStats
	ackTotal   int   // distinct acknowledged commits
	ackChecks  int   // acknowledged commits read back, summed over kills
	goneChecks int   // erased texts looked for, summed over kills
	failures   int   // failures found, but for erased texts found
	late       int   // texts erased after an unacknowledged copy held them
	lateFound  int   // of those, found in the storage
	leaks      int   // erased texts found (the first crashReportLimit are described)
	unfinished int   // most unpublished packs seen at once
	size       int64 // largest size of the storage the checks read
	// compressed is the most live texts a check found only in what the
	// storage decodes to (kept compressed), and not as they are.
	compressed int
}

// What the parent calls the moments of a kill outside an operation.
const (
	crashStarting = "worker starting"
	crashBetween  = "between operations"
)

// at names kill k, made while op was under way, in failure messages.
func (h *crashHarness) at(k int, op string) string {
	if op == crashStarting || op == crashBetween {
		return fmt.Sprintf("kill %d (%s)", k, op)
	}
	return fmt.Sprintf("kill %d (during %s)", k, op)
}

// crashReportLimit caps the erased texts found that are described one by
// one; the rest are counted in the summary.
const crashReportLimit = 10

func newCrashHarness(t testing.TB, seed uint64, be *crashBackend) *crashHarness {
	self, err := os.Executable()
	require.NoError(t, err)
	tr, err := tract.Init(be.location)
	require.NoError(t, err)
	if be.seed != nil {
		be.seed(tr)
	}
	require.NoError(t, tr.Close())
	var ops []string
	for _, op := range crashOps {
		if !be.without[op.name] {
			ops = append(ops, op.name)
		}
	}
	return &crashHarness{
		t: t, ctx: context.Background(), be: be, ops: ops, self: self, seed: seed,
		rng:     rand.New(rand.NewPCG(seed, 0)),
		live:    make(map[dag.Hash]crashAck),
		holders: make(map[string]int),
		texts:   make(map[string]string),
		gone:    make(map[string]*crashGone),
		est:     make(map[string]time.Duration),
		byOp:    make(map[string]*crashOpStats),
	}
}

// failf reports a failure.
func (h *crashHarness) failf(format string, args ...any) {
	h.t.Helper()
	h.failures++
	h.t.Errorf(format, args...)
}

// leakf reports an erased text found in the file, in detail for the first
// crashReportLimit of them (there may be thousands).
func (h *crashHarness) leakf(format string, args ...any) {
	h.t.Helper()
	h.leaks++
	if h.leaks <= crashReportLimit {
		h.t.Errorf(format, args...)
	}
}

// crashPlan says when to kill: after a delay from the worker's start, or
// inside operation op, which the worker runs after skip others: frac of
// the way through its usual duration.
type crashPlan struct {
	after time.Duration
	op    string
	skip  int
	frac  float64
}

func (h *crashHarness) plan() crashPlan {
	if h.rng.IntN(5) == 0 {
		return crashPlan{after: time.Duration(h.rng.Int64N(int64(150 * time.Millisecond)))}
	}
	ops := append([]string{crashOpen}, h.ops...)
	p := crashPlan{op: ops[h.rng.IntN(len(ops))], frac: h.rng.Float64()}
	if p.op != crashOpen {
		p.skip = h.rng.IntN(4)
	}
	return p
}

// estimate is how long op usually takes, as the worker's reports showed.
func (h *crashHarness) estimate(op string) time.Duration {
	if d, ok := h.est[op]; ok {
		return d
	}
	return 10 * time.Millisecond
}

// killOnce starts the worker on the repository, kills it as a plan says,
// and records what it reported.
func (h *crashHarness) killOnce(k int) {
	h.run++
	cmd := exec.Command(h.self)
	p := h.plan()
	cmd.Env = append(os.Environ(), crashWorkerEnv+"="+strconv.Itoa(h.run), "TRACT_CRASH_DB="+h.be.worker,
		"TRACT_CRASH_SEED="+strconv.FormatUint(h.seed, 10), "TRACT_CRASH_OPS="+strings.Join(h.ops, ","))
	if p.op != "" && p.op != crashOpen {
		cmd.Env = append(cmd.Env, fmt.Sprintf("TRACT_CRASH_NEXT=%d %s", p.skip, p.op))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(h.t, err)
	require.NoError(h.t, cmd.Start())
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return // a last line without its newline was cut by the kill: not a report
			}
			lines <- strings.TrimSuffix(line, "\n")
		}
	}()

	h.cur, h.curCands, h.failed, h.started = "", nil, "", false
	began := 0
	timeout := time.NewTimer(3 * time.Second) // the worker hangs
	defer timeout.Stop()
	var fire <-chan time.Time
	if p.op == "" {
		fire = time.After(p.after)
	}
	exited := false
wait:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				exited = true
				break wait
			}
			h.apply(line, k)
			if fire == nil && strings.HasPrefix(line, crashLineBegin+" ") {
				began++
				// The worker runs op as operation skip+1 (after "open"),
				// or something else when the branch is too short for it.
				if began > p.skip && (h.cur == p.op || began == p.skip+2) {
					fire = time.After(time.Duration(p.frac * 1.2 * float64(h.estimate(h.cur))))
				}
			}
		case <-fire:
			break wait
		case <-timeout.C:
			break wait
		}
	}
	_ = cmd.Process.Kill()
	for line := range lines {
		h.apply(line, k)
	}
	_ = cmd.Wait()
	if h.be.settle != nil {
		h.be.settle()
	}
	if exited || h.failed != "" {
		h.failf("kill %d: the worker (run %d) stopped by itself during %q: %s\n%s", k, h.run, h.cur, h.failed, stderr.String())
		h.stop = true
	}
}

// apply records one line of the worker's report.
func (h *crashHarness) apply(line string, k int) {
	kind, rest, _ := strings.Cut(line, " ")
	switch kind {
	case crashLineBegin:
		fields := strings.Fields(rest)
		h.cur, h.curCands, h.curStart, h.started = fields[0], nil, time.Now(), true
		if len(fields) > 1 {
			h.curCands = make(map[dag.Hash]bool, len(fields)-1)
			for _, f := range fields[1:] {
				h.curCands[h.parseHash(f)] = true
			}
		}
	case crashLineAck:
		hs, quoted, _ := strings.Cut(rest, " ")
		hash := h.parseHash(hs)
		text, err := strconv.Unquote(quoted)
		require.NoError(h.t, err, "worker report")
		if _, ok := h.live[hash]; ok {
			return // acknowledged again (a chat's answer, a replay reused)
		}
		a := crashAck{text: text, op: h.cur}
		if strings.HasPrefix(text, crashTagPrefix) && len(text) >= crashTagLen {
			a.tag = text[:crashTagLen]
			if prev, ok := h.texts[a.tag]; ok && prev != text {
				h.failf("kill %d: the worker acknowledged two texts tagged %s", k, a.tag)
			}
			h.texts[a.tag] = text
			h.holders[a.tag]++
			if g := h.gone[a.tag]; g != nil && g.erased {
				h.failf("kill %d: %s acknowledged %s with the text %s, erased after kill %d by %s", k, h.cur, hash.Short(), a.tag, g.kill, g.how())
			}
			delete(h.gone, a.tag) // an unacknowledged copy, acknowledged now
		}
		h.live[hash] = a
		h.ackTotal++
	case crashLineErased:
		hash := h.parseHash(rest)
		h.erased = append(h.erased, hash)
		h.forget(hash, h.cur, false, k)
	case crashLineDone:
		if rest == h.cur && !h.curStart.IsZero() {
			d := time.Since(h.curStart)
			if old, ok := h.est[rest]; ok {
				d = (4*old + d) / 5
			}
			h.est[rest] = d
		}
		h.cur, h.curCands = "", nil
	case crashLineFail:
		h.failed = rest
	default:
		h.failf("kill %d: unexpected line from the worker: %.200q", k, line)
	}
}

func (h *crashHarness) parseHash(s string) dag.Hash {
	hash, err := dag.ParseHash(s)
	require.NoError(h.t, err, "worker report")
	return hash
}

// forget takes an acknowledged commit off the live set, erased by op
// (killed while it ran, or not), and when it was the last commit with its
// text, marks the text erased.
func (h *crashHarness) forget(hash dag.Hash, op string, killed bool, k int) {
	a, ok := h.live[hash]
	if !ok {
		return
	}
	delete(h.live, hash)
	if a.tag == "" {
		return
	}
	if h.holders[a.tag]--; h.holders[a.tag] > 0 {
		return
	}
	delete(h.holders, a.tag)
	h.gone[a.tag] = &crashGone{op: op, killed: killed, kill: k}
}

func (h *crashHarness) stats(op string) *crashOpStats {
	st := h.byOp[op]
	if st == nil {
		st = &crashOpStats{}
		h.byOp[op] = st
	}
	return st
}

// check opens the repository after kill k and runs the checks the test's
// doc comment lists.
func (h *crashHarness) check(k int) {
	op := h.cur
	switch {
	case op == "" && !h.started:
		op = crashStarting
	case op == "":
		op = crashBetween
	}
	st := h.stats(op)
	st.kills++

	tr, err := tract.Open(h.be.location)
	if err != nil {
		h.failf("%s: open: %v", h.at(k, op), err)
		h.stop = true
		return
	}
	rep, err := tr.Fsck(h.ctx)
	switch {
	case err != nil:
		h.failf("%s: fsck: %v", h.at(k, op), err)
		h.stop = true
	case !rep.OK():
		h.failf("%s: fsck found %d problems: %v", h.at(k, op), len(rep.Problems), rep.Problems)
		h.stop = true
	default:
		h.unfinished = max(h.unfinished, rep.UnfinishedImports)
	}

	var missing []dag.Hash
	err = tr.Store().View(context.Background(), func(tx store.Tx) error {
		for hash, a := range h.live {
			h.ackChecks++
			c, err := tx.Commit(hash)
			if errors.Is(err, store.ErrNotFound) {
				missing = append(missing, hash)
				continue
			}
			if err != nil {
				return fmt.Errorf("commit %s: %w", hash.Short(), err)
			}
			text, err := tx.Blob(c.Blob)
			if err != nil {
				return fmt.Errorf("text of commit %s: %w", hash.Short(), err)
			}
			if string(text) != a.text {
				h.failf("%s: commit %s (acknowledged by %s) holds another text", h.at(k, op), hash.Short(), a.op)
			}
		}
		for _, hash := range h.erased {
			if ok, err := tx.HasCommit(hash); err != nil {
				return err
			} else if ok {
				h.failf("%s: commit %s, reported erased, is back", h.at(k, op), hash.Short())
			}
		}
		return nil
	})
	h.erased = h.erased[:0]
	if err != nil {
		h.failf("%s: reading the acknowledged commits: %v", h.at(k, op), err)
		h.stop = true
	}
	for _, hash := range missing {
		if !crashErasers[op] || !h.curCands[hash] {
			a := h.live[hash]
			st.lost++
			h.failf("%s: acknowledged commit %s (made by %s, text %.40q) is gone", h.at(k, op), hash.Short(), a.op, a.text)
		}
		h.forget(hash, op, true, k)
	}
	if err := tr.Store().View(context.Background(), func(tx store.Tx) error { return h.settle(tx, k, op) }); err != nil {
		h.failf("%s: reading the blobs of erased texts: %v", h.at(k, op), err)
		h.stop = true
	}
	require.NoError(h.t, tr.Close())
	h.checkStorage(k, op)
}

// settle decides, for each text whose acknowledged commits are all gone,
// whether it is erased: whether its blob is gone too. A blob still stored
// is either used by a commit the worker never had acknowledged, and the
// text lives on in it (see crashGone.held), or used by none: an erasure
// left the text behind.
func (h *crashHarness) settle(tx store.Tx, k int, op string) error {
	var used map[dag.Hash]bool // the blobs of every commit, read once if needed
	for tag, g := range h.gone {
		if g.erased {
			continue
		}
		blob := dag.Sum([]byte(h.texts[tag]))
		stored, err := tx.HasBlob(blob)
		if err != nil {
			return err
		}
		if stored {
			if used == nil {
				used = make(map[dag.Hash]bool)
				err := tx.ForEachCommit(func(_ dag.Hash, raw []byte) error {
					hd, err := dag.DecodeHeader(raw)
					used[hd.Blob] = true
					return err
				})
				if err != nil {
					return err
				}
			}
			if used[blob] {
				g.held = true
				continue
			}
			h.failf("%s: the commits of text %s are gone (by %s after kill %d), but its blob is still stored, with no commit using it",
				h.at(k, op), tag, g.how(), g.kill)
		}
		g.erased = true
		switch {
		case g.held:
			h.late++
		case g.killed:
			h.stats(g.op).killed++
		default:
			h.stats(g.op).erased++
		}
	}
	return nil
}

// checkStorage reads the repository's storage raw and looks for the tags
// of erased texts, and of live ones as a control.
func (h *crashHarness) checkStorage(k int, op string) {
	chunks := h.be.read()
	var size int64
	for _, c := range chunks {
		if !c.decoded {
			size += int64(len(c.data))
		}
	}
	h.size = max(h.size, size)
	found := crashTagsIn(chunks)
	h.dropSoup(chunks, found)
	compressed := 0
	for tag := range h.holders {
		hits, ok := found[tag]
		if !ok {
			h.failf("%s: the text %s of a live acknowledged commit is not in %s: the check cannot see texts", h.at(k, op), tag, h.be.where)
			h.stop = true
			return
		}
		if !slices.ContainsFunc(hits, func(hit crashHit) bool { return !chunks[hit.chunk].decoded }) {
			compressed++
		}
	}
	h.compressed = max(h.compressed, compressed)
	var leaks []string
	for tag, g := range h.gone {
		if !g.erased {
			continue
		}
		h.goneChecks++
		if _, ok := found[tag]; ok && !g.leaked {
			g.leaked = true
			leaks = append(leaks, tag)
		}
	}
	if len(leaks) == 0 {
		return
	}
	slices.Sort(leaks)
	where := h.be.locate(chunks, found, leaks)
	for _, tag := range leaks {
		g := h.gone[tag]
		switch {
		case g.held:
			h.lateFound++
		case g.killed:
			h.stats(g.op).killedFound++
		default:
			h.stats(g.op).erasedFound++
		}
		whole := "the whole text"
		hit := found[tag][0]
		if raw := chunks[hit.chunk].data; !bytes.Contains(raw, []byte(h.texts[tag])) {
			whole = fmt.Sprintf("a fragment (%q)", raw[max(0, hit.off-40):min(len(raw), hit.off+crashTagLen+20)])
		}
		h.leakf("%s: erased text %s (%d bytes; erased by %s after kill %d) is still in %s: %s, %s",
			h.at(k, op), tag, len(h.texts[tag]), g.how(), g.kill, h.be.where, whole, where[tag])
	}
}

// crashSoupCheck is how many bytes after a tag found in what a chunk
// decodes to must be the text's own for the hit to count.
const crashSoupCheck = 16

// dropSoup drops from found the hits, in what a chunk decodes to, that
// the text does not go on from. Read as codes, any bytes decode to
// symbols (ASCII text, page headers), and a tag is a few symbols (its
// run's prefix, shared by the run's texts; a piece of its number, shared
// by ten): some run of bytes decodes to it somewhere. A text's own codes
// decode to the words that follow the tag too (a tag is always followed
// by six words), which such soup does not.
func (h *crashHarness) dropSoup(chunks []crashChunk, found map[string][]crashHit) {
	for tag, hits := range found {
		text, known := h.texts[tag]
		hits = slices.DeleteFunc(hits, func(hit crashHit) bool {
			c := chunks[hit.chunk]
			if !c.decoded {
				return false
			}
			end := hit.off + crashTagLen + crashSoupCheck
			return !known || end > len(c.data) || !strings.Contains(text, string(c.data[hit.off:end]))
		})
		if len(hits) == 0 {
			delete(found, tag)
		} else {
			found[tag] = hits
		}
	}
}

// crashTagsIn returns where every tag is in chunks, by tag.
func crashTagsIn(chunks []crashChunk) map[string][]crashHit {
	found := make(map[string][]crashHit)
	for i, c := range chunks {
		for tag, offs := range crashTags(c.data) {
			for _, off := range offs {
				found[tag] = append(found[tag], crashHit{chunk: i, off: off})
			}
		}
	}
	return found
}

// crashTags returns the offsets of every tag in raw, by tag.
func crashTags(raw []byte) map[string][]int {
	found := make(map[string][]int)
	prefix := []byte(crashTagPrefix)
	for off := 0; ; {
		i := bytes.Index(raw[off:], prefix)
		if i < 0 {
			return found
		}
		at := off + i
		if at+crashTagLen <= len(raw) {
			if tag := string(raw[at : at+crashTagLen]); crashTagOK(tag) {
				found[tag] = append(found[tag], at)
			}
		}
		off = at + 1
	}
}

// crashTagOK reports whether tag has the form of crashTag.
func crashTagOK(tag string) bool {
	var run, n int
	_, err := fmt.Sscanf(tag, crashTagPrefix+"%4d-n%6d]", &run, &n)
	return err == nil && tag == crashTag(run, n)
}

// summary logs the table of kills and erasures, and what the checks found.
func (h *crashHarness) summary(elapsed time.Duration) {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "operation\tkills during it\tlost commits\ttexts it erased\tfound after\terased, then killed\tfound after\t")
	var total crashOpStats
	order := append([]string{crashOpen}, h.ops...)
	for _, op := range append(order, crashStarting, crashBetween) {
		st := h.stats(op)
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", op, st.kills, st.lost, st.erased, st.erasedFound, st.killed, st.killedFound)
		total.kills += st.kills
		total.lost += st.lost
		total.erased += st.erased
		total.erasedFound += st.erasedFound
		total.killed += st.killed
		total.killedFound += st.killedFound
	}
	fmt.Fprintf(w, "total\t%d\t%d\t%d\t%d\t%d\t%d\t\n", total.kills, total.lost, total.erased, total.erasedFound, total.killed, total.killedFound)
	w.Flush()
	fmt.Fprintf(&b, "%d acknowledged commits (%d live at the end), read back %d times\n", h.ackTotal, len(h.live), h.ackChecks)
	erased := 0
	for _, g := range h.gone {
		if g.erased {
			erased++
		}
	}
	fmt.Fprintf(&b, "%d erased texts (%d of them erased with an unacknowledged copy, %d of those found), looked for %d times; %d found in %s\n",
		erased, h.late, h.lateFound, h.goneChecks, total.erasedFound+total.killedFound+h.lateFound, h.be.where)
	if h.be.strays != nil {
		strays, in := h.be.strays()
		inErased := 0
		for tag := range in {
			if g := h.gone[tag]; g != nil && g.erased {
				inErased++
			}
		}
		fmt.Fprintf(&b, "%d stray copies beside the repository, holding %d of the erased texts\n", strays, inErased)
	}
	if h.be.seed != nil {
		fmt.Fprintf(&b, "up to %d live texts at once found only compressed (in what %s decodes to)\n", h.compressed, h.be.where)
		if h.compressed == 0 && !h.stop {
			h.t.Errorf("no live text was ever found only compressed: the checks did not search compressed texts")
		}
	}
	fmt.Fprintf(&b, "other failures: %d; %s up to %d KiB; up to %d unfinished imports at once\n", h.failures, h.be.where, h.size>>10, h.unfinished)
	fmt.Fprintf(&b, "%d kills in %s (seed %d)", total.kills, elapsed.Round(time.Millisecond), h.seed)
	h.t.Log("\n" + b.String())
	if h.leaks > crashReportLimit {
		h.t.Errorf("%d erased texts found in %s in all; the first %d are above", h.leaks, h.be.where, crashReportLimit)
	}
}
