package tract_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tractdag/tract"
)

// This file is the model of TestModel: what a repository holds, kept in
// plain maps and slices and changed by rules written from the documented
// behaviour, never by calling tract. Hashes are the one thing the model
// cannot know in advance; it learns each commit's hash from tract (from
// what an operation returns, or by finding the commit with the expected
// parent and content) and from then on checks it.

// mCommit is a commit as the model knows it.
type mCommit struct {
	id     int
	hash   tract.Hash // learned from tract; zero until then
	parent *mCommit
	kind   tract.Kind
	role   tract.Role
	text   string
	// textPrefix, when set, means the text is not known in advance (a
	// model error's message): the commit's text must start with it, and
	// the model learns the rest.
	textPrefix string
	// meta is the metadata the commit must carry; nil when the model does
	// not check it (tract writes the metadata of a turn's commits).
	meta map[string]any
	// step is the step that made the commit: its time falls in the step's
	// window, unless timeOf names the commit whose time it carries (a
	// compressed chain keeps the times of what it replaces).
	step   int
	timeOf *mCommit
	// time is the commit's time, learned when it is first seen.
	time time.Time
}

func (c *mCommit) String() string {
	if c == nil {
		return "(none)"
	}
	return fmt.Sprintf("c%d", c.id)
}

// describe says what the commit is, for failure messages.
func (c *mCommit) describe() string {
	text := c.text
	if len(text) > 40 {
		text = text[:40] + "…"
	}
	return fmt.Sprintf("%s (%s %s %q, parent %s, hash %s)", c, c.kind, c.role, text, c.parent, c.hash.Short())
}

// mEntry is a reflog entry as the model knows it.
type mEntry struct {
	old, new *mCommit
	action   string
	// msg is the entry's message where the API documents it; "" when the
	// model does not check it.
	msg  string
	step int
}

// repoModel is the whole repository as the model knows it.
type repoModel struct {
	commits  []*mCommit          // in the repository, oldest first
	alive    map[*mCommit]bool   // the same, as a set
	branches map[string]*mCommit // short name → tip
	head     string              // the branch HEAD is on; "" when detached
	detached *mCommit            // where a detached HEAD points
	origHead *mCommit
	reflogs  map[string][]mEntry // full ref name → entries, oldest first
	gone     map[string]bool     // deleted branches, whose reflogs must be gone
	nextID   int
}

func newRepoModel() *repoModel {
	return &repoModel{
		alive:    map[*mCommit]bool{},
		branches: map[string]*mCommit{},
		head:     "main",
		reflogs:  map[string][]mEntry{"HEAD": nil},
		gone:     map[string]bool{},
	}
}

// tip is the commit HEAD resolves to (nil on an unborn branch).
func (m *repoModel) tip() *mCommit {
	if m.head == "" {
		return m.detached
	}
	return m.branches[m.head]
}

// newCommit adds a commit made at step on parent.
func (m *repoModel) newCommit(parent *mCommit, kind tract.Kind, role tract.Role, text string, step int) *mCommit {
	m.nextID++
	c := &mCommit{id: m.nextID, parent: parent, kind: kind, role: role, text: text, step: step}
	m.commits = append(m.commits, c)
	m.alive[c] = true
	return c
}

// forget drops c, which the model made but tract did not: c is a commit
// the model already has (see sameAsBefore).
func (m *repoModel) forget(c *mCommit) {
	m.commits = slices.DeleteFunc(m.commits, func(o *mCommit) bool { return o == c })
	delete(m.alive, c)
}

// at is where a position points: pos is a branch (a view's), or "" for
// HEAD's position.
func (m *repoModel) at(pos string) *mCommit {
	if pos == "" {
		return m.tip()
	}
	return m.branches[pos]
}

// move points HEAD's position (its branch, or HEAD itself when detached)
// at to.
func (m *repoModel) move(to *mCommit, action, msg string, step int) {
	m.moveAt("", to, action, msg, step)
}

// moveAt points a position (see at) at to, with an entry in the branch's
// reflog and, when HEAD is on the branch or detached, in HEAD's.
func (m *repoModel) moveAt(pos string, to *mCommit, action, msg string, step int) {
	e := mEntry{old: m.at(pos), new: to, action: action, msg: msg, step: step}
	if pos == "" && m.head == "" {
		m.detached = to
		m.appendEntry("HEAD", e)
		return
	}
	if pos == "" {
		pos = m.head
	}
	m.branches[pos] = to
	m.appendEntry(branchRef(pos), e)
	if m.head == pos {
		m.appendEntry("HEAD", e)
	}
}

func (m *repoModel) appendEntry(ref string, e mEntry) {
	m.reflogs[ref] = append(m.reflogs[ref], e)
}

func branchRef(name string) string { return "refs/heads/" + name }

// branchNames returns the branches, sorted.
func (m *repoModel) branchNames() []string {
	names := make([]string, 0, len(m.branches))
	for n := range m.branches {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// reflogNames returns the refs that have reflogs, sorted.
func (m *repoModel) reflogNames() []string {
	names := make([]string, 0, len(m.reflogs))
	for n := range m.reflogs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// chain returns the first-parent chain ending at c, oldest first.
func chainOf(c *mCommit) []*mCommit {
	var out []*mCommit
	for ; c != nil; c = c.parent {
		out = append(out, c)
	}
	slices.Reverse(out)
	return out
}

// ancestor returns c's n-th first-parent ancestor (nil past the root).
func ancestor(c *mCommit, n int) *mCommit {
	for ; c != nil && n > 0; n-- {
		c = c.parent
	}
	return c
}

// modelMessage is one message Compile should send.
type modelMessage struct{ role, content string }

// compileOf is what Compile sends for the chain ending at c: messages and
// summaries as their role, steering as the user's, notes and errors not.
func compileOf(c *mCommit) []modelMessage {
	var out []modelMessage
	for _, x := range chainOf(c) {
		switch x.kind {
		case tract.KindMessage, tract.KindSummary:
			out = append(out, modelMessage{string(x.role), x.text})
		case tract.KindSteering:
			out = append(out, modelMessage{"user", x.text})
		}
	}
	return out
}

// tips returns the commits refs keep reachable: every branch and HEAD.
func (m *repoModel) tips() []*mCommit {
	var out []*mCommit
	for _, n := range m.branchNames() {
		out = append(out, m.branches[n])
	}
	if t := m.tip(); t != nil {
		out = append(out, t)
	}
	return out
}

// closure returns the commits in from and all their ancestors.
func closure(from []*mCommit) map[*mCommit]bool {
	out := map[*mCommit]bool{}
	for _, c := range from {
		for ; c != nil && !out[c]; c = c.parent {
			out[c] = true
		}
	}
	return out
}

// reachable returns the commits a branch or HEAD reaches.
func (m *repoModel) reachable() map[*mCommit]bool { return closure(m.tips()) }

// byHash returns the commit in the repository with hash h.
func (m *repoModel) byHash(h tract.Hash) *mCommit {
	for _, c := range m.commits {
		if c.hash == h {
			return c
		}
	}
	return nil
}

// removal is what deleting commits removes, as tract.Removed counts it.
type removal struct {
	commits, blobs, entries int
}

// remove deletes the dead commits, the reflog entries drop selects or
// that mention a dead commit, and ORIG_HEAD when it names a dead commit,
// and counts what went (blobs are texts no surviving commit has).
func (m *repoModel) remove(dead map[*mCommit]bool, drop func(mEntry) bool) removal {
	var rm removal
	deadTexts, liveTexts := map[string]bool{}, map[string]bool{}
	kept := m.commits[:0]
	for _, c := range m.commits {
		if dead[c] {
			deadTexts[c.text] = true
			delete(m.alive, c)
			rm.commits++
			continue
		}
		liveTexts[c.text] = true
		kept = append(kept, c)
	}
	clear(m.commits[len(kept):])
	m.commits = kept
	for t := range deadTexts {
		if !liveTexts[t] {
			rm.blobs++
		}
	}
	for _, name := range m.reflogNames() {
		es := m.reflogs[name]
		var left []mEntry
		for _, e := range es {
			if dead[e.old] || dead[e.new] || drop(e) {
				rm.entries++
				continue
			}
			left = append(left, e)
		}
		m.reflogs[name] = left
	}
	if dead[m.origHead] {
		m.origHead = nil
	}
	return rm
}

// gc is what GC does at step when given an expiry of expiry minutes and
// a half (a negative expiry: the default, 30 days, which no run reaches).
// Steps are a minute apart and each step's times fall in its first
// second, so an entry is expired when it was made expiry+1 or more steps
// ago, and never on the boundary.
func (m *repoModel) gc(step, expiry int) removal {
	expired := func(e mEntry) bool { return expiry >= 0 && e.step <= step-expiry-1 }
	var protect []*mCommit
	for _, name := range m.reflogNames() {
		for _, e := range m.reflogs[name] {
			if !expired(e) {
				protect = append(protect, e.old, e.new)
			}
		}
	}
	keep := closure(append(protect, m.tips()...))
	dead := map[*mCommit]bool{}
	for _, c := range m.commits {
		if !keep[c] {
			dead[c] = true
		}
	}
	return m.remove(dead, expired)
}

// hardReset finishes a hard reset whose move left reachable the commits
// in after, where before were reachable: the commits the move left behind
// go, with every commit descending from one of them.
func (m *repoModel) hardReset(before map[*mCommit]bool) removal {
	after := m.reachable()
	dead := map[*mCommit]bool{}
	for _, c := range m.commits {
		for x := c; x != nil; x = x.parent {
			if before[x] && !after[x] {
				dead[c] = true
				break
			}
		}
	}
	return m.remove(dead, func(mEntry) bool { return false })
}

// orphanedBy counts the commits a reset from from made orphans: those on
// from's first-parent chain that nothing reachable (after the move)
// reaches.
func orphanedBy(from *mCommit, reachable map[*mCommit]bool) int {
	n := 0
	for c := from; c != nil; c = c.parent {
		if !reachable[c] {
			n++
		}
	}
	return n
}

// refNames is what CommitInfo.Refs lists for each commit: "HEAD -> b" on
// the tip of the branch HEAD is on (and not b itself), "HEAD" where a
// detached HEAD points, the other branches, then ORIG_HEAD.
func (m *repoModel) refNames() map[*mCommit][]string {
	out := map[*mCommit][]string{}
	switch {
	case m.head == "":
		out[m.detached] = append(out[m.detached], "HEAD")
	case m.branches[m.head] != nil:
		c := m.branches[m.head]
		out[c] = append(out[c], "HEAD -> "+m.head)
	}
	for _, n := range m.branchNames() {
		if n != m.head {
			out[m.branches[n]] = append(out[m.branches[n]], n)
		}
	}
	if m.origHead != nil {
		out[m.origHead] = append(out[m.origHead], "ORIG_HEAD")
	}
	return out
}

// orphanActions lists the actions of the entries that may have orphaned
// a side chain whose tip is c: the moves away from c, other than commits
// and imports (which only move forward).
func (m *repoModel) orphanActions(c *mCommit) []string {
	var out []string
	for _, name := range m.reflogNames() {
		for _, e := range m.reflogs[name] {
			if e.old == c && e.action != "commit" && e.action != "import" {
				out = append(out, e.action)
			}
		}
	}
	return out
}

// modelClock is the repository's clock: every step starts a minute after
// the previous one, and each call within a step advances a microsecond,
// so that a step's times fall in its own minute.
type modelClock struct {
	mu    sync.Mutex // guards base and n
	base  time.Time
	n     int
	epoch time.Time
}

func newModelClock() *modelClock {
	e := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	return &modelClock{base: e, epoch: e}
}

func (c *modelClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.base.Add(time.Duration(c.n) * time.Microsecond)
}

// setStep moves the clock to the start of step's minute.
func (c *modelClock) setStep(step int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base, c.n = c.window(step), 0
}

// window is the start of step's minute.
func (c *modelClock) window(step int) time.Time {
	return c.epoch.Add(time.Duration(step) * time.Minute)
}

// inStep reports whether t falls in step's minute.
func (c *modelClock) inStep(t time.Time, step int) bool {
	w := c.window(step)
	return !t.Before(w) && t.Before(w.Add(time.Minute))
}

// countAttempts is english for "N attempt(s)", as tract's messages say it.
func countAttempts(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// shortText cuts a text for the step history.
func shortText(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if r := []rune(s); len(r) > 32 {
		return string(r[:32]) + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}
