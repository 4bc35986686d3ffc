package tract_test

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// check compares the whole repository with the model: the commits and
// how LogAll lists them, HEAD and Status, the branches, Log, Compile, every
// reflog, and Fsck.
func (r *modelRun) check() {
	all, err := r.tr.LogAll(r.ctx)
	require.NoError(r.rec, err, "LogAll")
	infos := map[tract.Hash]*tract.CommitInfo{}
	for _, ci := range all.Commits {
		infos[ci.Hash] = ci
	}
	for _, ch := range all.Orphans {
		for _, ci := range ch.Commits {
			if infos[ci.Hash] != nil {
				r.rec.Errorf("LogAll lists %s twice", ci.Hash.Short())
			}
			infos[ci.Hash] = ci
		}
	}
	r.learn(infos)
	r.checkCommits(infos)
	reach := r.m.reachable()
	r.checkReachable(all, reach)
	r.checkOrphans(all, reach)
	r.checkHead()
	r.checkLogAndCompile()
	r.checkReflogs()
	r.checkFsck()
}

// learn finds the commits the model made without learning their hashes
// (a turn's steering messages, a compressed chain's replayed commits, an
// import's commits before its tip): each is the one commit with the
// expected parent, kind, role and text that no other model commit is.
func (r *modelRun) learn(infos map[tract.Hash]*tract.CommitInfo) {
	children := map[tract.Hash][]*tract.CommitInfo{}
	for _, ci := range infos {
		var p tract.Hash
		if len(ci.Parents) > 0 {
			p = ci.Parents[0]
		}
		children[p] = append(children[p], ci)
	}
	bound := map[tract.Hash]bool{}
	for _, c := range r.m.commits {
		bound[c.hash] = true
	}
	for progress := true; progress; {
		progress = false
		for _, c := range r.m.commits {
			if !c.hash.IsZero() || (c.parent != nil && c.parent.hash.IsZero()) {
				continue
			}
			var found []*tract.CommitInfo
			for _, ci := range children[c.parent.hashOrZero()] {
				if !bound[ci.Hash] && matches(c, ci) {
					found = append(found, ci)
				}
			}
			switch len(found) {
			case 0:
				r.rec.Errorf("%s is not in the repository", c.describe())
			case 1:
				c.hash, bound[found[0].Hash], progress = found[0].Hash, true, true
			default:
				r.rec.Errorf("%s could be any of %d commits", c.describe(), len(found))
			}
		}
	}
}

// matches reports whether ci has c's kind, role and text.
func matches(c *mCommit, ci *tract.CommitInfo) bool {
	if c.kind != ci.Kind || c.role != ci.Role {
		return false
	}
	if c.text == "" && c.textPrefix != "" {
		return strings.HasPrefix(ci.Text, c.textPrefix)
	}
	return c.text == ci.Text
}

// checkCommits checks that the repository holds exactly the model's
// commits, each with its parent, kind, role, text, metadata, time and refs.
func (r *modelRun) checkCommits(infos map[tract.Hash]*tract.CommitInfo) {
	names := r.m.refNames()
	for _, c := range r.m.commits {
		ci := infos[c.hash]
		if ci == nil {
			if !c.hash.IsZero() {
				r.rec.Errorf("%s is missing from LogAll", c.describe())
			}
			continue
		}
		if c.text == "" && c.textPrefix != "" {
			c.text = ci.Text
		}
		assert.True(r.rec, matches(c, ci), "%s: the repository has %s %s %q", c.describe(), ci.Kind, ci.Role, ci.Text)
		var parents []tract.Hash
		if c.parent != nil {
			parents = []tract.Hash{c.parent.hash}
		}
		assert.Equal(r.rec, nonNil(parents), nonNil(ci.Parents), "parents of %s", c)
		if c.meta != nil {
			var got map[string]any
			if assert.NoError(r.rec, json.Unmarshal(ci.Meta, &got), "metadata of %s", c) {
				assert.Equal(r.rec, c.meta, got, "metadata of %s", c)
			}
		}
		switch {
		case !c.time.IsZero():
			assert.True(r.rec, c.time.Equal(ci.Time), "%s's time changed from %v to %v", c, c.time, ci.Time)
		case c.timeOf != nil:
			assert.True(r.rec, c.timeOf.time.Equal(ci.Time), "%s has the time %v, not that of %s, %v", c, ci.Time, c.timeOf, c.timeOf.time)
		default:
			assert.True(r.rec, r.clock.inStep(ci.Time, c.step), "%s has the time %v, not one of step %d", c, ci.Time, c.step)
		}
		c.time = ci.Time
		assert.Equal(r.rec, nonNil(names[c]), nonNil(ci.Refs), "refs at %s", c)
	}
	for h, ci := range infos {
		if r.m.byHash(h) == nil {
			r.rec.Errorf("the repository has a commit the model does not: %s %s %s %q", h.Short(), ci.Kind, ci.Role, shortText(ci.Text))
		}
	}
}

// checkReachable checks LogAll's reachable commits: the model's, newest
// first.
func (r *modelRun) checkReachable(all *tract.History, reach map[*mCommit]bool) {
	var want, got []tract.Hash
	for _, c := range r.m.commits {
		if reach[c] {
			want = append(want, c.hash)
		}
	}
	for i, ci := range all.Commits {
		got = append(got, ci.Hash)
		if i > 0 && ci.Time.After(all.Commits[i-1].Time) {
			r.rec.Errorf("LogAll lists %s (%v) after %s (%v): not newest first", ci.Hash.Short(), ci.Time, all.Commits[i-1].Hash.Short(), all.Commits[i-1].Time)
		}
	}
	assert.ElementsMatch(r.rec, want, got, "reachable commits")
}

// checkOrphans checks LogAll's side chains: every commit no ref reaches
// listed once; each chain a tip and its first-parent ancestors down to the
// reachable commit it forked from (less those an older chain lists); the
// chains in the order their tips were made; each with the action of an
// entry that moved a ref away from its tip.
func (r *modelRun) checkOrphans(all *tract.History, reach map[*mCommit]bool) {
	chainOfHash := map[tract.Hash]int{}
	for i, ch := range all.Orphans {
		for _, ci := range ch.Commits {
			chainOfHash[ci.Hash] = i
		}
	}
	hasOrphanChild := map[*mCommit]bool{}
	for _, c := range r.m.commits {
		if reach[c] {
			continue
		}
		if _, ok := chainOfHash[c.hash]; !ok {
			r.rec.Errorf("orphan %s is not in LogAll's side chains", c.describe())
		}
		hasOrphanChild[c.parent] = true
	}
	for i, ch := range all.Orphans {
		if !assert.NotEmpty(r.rec, ch.Commits, "side chain %d", i) {
			continue
		}
		tip := r.m.byHash(ch.Commits[0].Hash)
		if tip == nil || reach[tip] {
			r.rec.Errorf("side chain %d starts at %s, no orphan of the model", i, ch.Commits[0].Hash.Short())
			continue
		}
		assert.False(r.rec, hasOrphanChild[tip], "side chain %d starts at %s, which has an orphan child", i, tip)
		k, x := 0, tip
		for ; x != nil && !reach[x]; x = x.parent {
			if k < len(ch.Commits) && ch.Commits[k].Hash == x.hash {
				k++
			} else if chainOfHash[x.hash] >= i {
				r.rec.Errorf("side chain %d from %s leaves out %s, which no older chain lists", i, tip, x)
			}
		}
		assert.Equal(r.rec, len(ch.Commits), k, "side chain %d from %s lists commits that are not its tip's ancestors, in order", i, tip)
		assert.Equal(r.rec, x.hashOrZero(), ch.Fork, "fork point of side chain %d from %s", i, tip)
		if i > 0 {
			prev := all.Orphans[i-1].Commits[0].Time
			assert.False(r.rec, ch.Commits[0].Time.Before(prev), "side chain %d's tip is older than chain %d's", i, i-1)
		}
		if acts := r.m.orphanActions(tip); len(acts) == 0 {
			assert.Empty(r.rec, ch.Action, "no entry orphaned side chain %d from %s", i, tip)
		} else {
			assert.Contains(r.rec, acts, ch.Action, "action of side chain %d from %s", i, tip)
		}
	}
}

// checkHead checks HEAD, Status and the branches.
func (r *modelRun) checkHead() {
	tip := r.m.tip()
	branch, h, err := r.tr.Head(r.ctx)
	require.NoError(r.rec, err, "Head")
	assert.Equal(r.rec, r.m.head, branch, "HEAD's branch")
	assert.Equal(r.rec, tip.hashOrZero(), h, "HEAD")
	st, err := r.tr.Status(r.ctx)
	require.NoError(r.rec, err, "Status")
	assert.Equal(r.rec, r.m.head, st.Branch, "status: branch")
	assert.Equal(r.rec, r.m.head == "", st.Detached, "status: detached")
	assert.Equal(r.rec, tip.hashOrZero(), st.Head, "status: head")
	assert.Equal(r.rec, len(chainOf(tip)), st.Length, "status: length")
	assert.Equal(r.rec, len(compileOf(tip)), st.Messages, "status: messages")
	assert.Equal(r.rec, r.m.origHead.hashOrZero(), st.OrigHead, "status: ORIG_HEAD")
	var want []tract.Branch
	for _, n := range r.m.branchNames() {
		want = append(want, tract.Branch{Name: n, Hash: r.m.branches[n].hash, Current: n == r.m.head})
	}
	got, err := r.tr.Branches(r.ctx)
	require.NoError(r.rec, err, "Branches")
	assert.Equal(r.rec, want, got, "branches")
}

// checkLogAndCompile checks Log and Compile at HEAD, and Compile at some
// other commit.
func (r *modelRun) checkLogAndCompile() {
	tip := r.m.tip()
	want := hashes(chainOf(tip))
	slices.Reverse(want)
	log, err := r.tr.Log(r.ctx)
	require.NoError(r.rec, err, "Log")
	got := make([]tract.Hash, len(log))
	for i, ci := range log {
		got[i] = ci.Hash
	}
	assert.Equal(r.rec, nonNil(want), got, "Log")
	r.checkCompile(tip)
	if c := r.anyCommit(); c != nil {
		r.checkCompile(c)
	}
}

func (r *modelRun) checkCompile(at *mCommit) {
	var opts []tract.CompileOption
	if at != r.m.tip() {
		opts = append(opts, tract.CompileAt(at.hash.String()))
	}
	msgs, err := r.tr.Compile(r.ctx, opts...)
	require.NoError(r.rec, err, "Compile at %s", at)
	got := make([]modelMessage, len(msgs))
	for i, m := range msgs {
		got[i] = modelMessage{m.Role, m.Content}
	}
	assert.Equal(r.rec, nonNil(compileOf(at)), got, "Compile at %s", at)
}

// checkReflogs checks the reflogs of HEAD and of every branch, entry by
// entry, newest first; that deleted branches have none; and that nothing
// was stranded.
func (r *modelRun) checkReflogs() {
	for _, name := range r.m.reflogNames() {
		want := r.m.reflogs[name]
		got, err := r.tr.Reflog(r.ctx, strings.TrimPrefix(name, "refs/heads/"))
		require.NoError(r.rec, err, "reflog of %s", name)
		if !assert.Len(r.rec, got, len(want), "entries in the reflog of %s", name) {
			continue
		}
		for i, e := range got {
			w := want[len(want)-1-i]
			assert.Equal(r.rec, name, e.Ref)
			assert.Equal(r.rec, i, e.Index)
			assert.Equal(r.rec, w.old.hashOrZero(), e.Old, "%s@{%d}: old", name, i)
			assert.Equal(r.rec, w.new.hashOrZero(), e.New, "%s@{%d}: new", name, i)
			assert.Equal(r.rec, w.action, e.Action, "%s@{%d}: action", name, i)
			if w.msg != "" {
				assert.Equal(r.rec, w.msg, e.Message, "%s@{%d}: message", name, i)
			}
			assert.True(r.rec, r.clock.inStep(e.Time, w.step), "%s@{%d} has the time %v, not one of step %d", name, i, e.Time, w.step)
		}
	}
	for _, name := range modelBranches {
		if r.m.gone[name] {
			_, err := r.tr.Reflog(r.ctx, name)
			assert.ErrorIs(r.rec, err, tract.ErrBranchNotFound, "the reflog of deleted branch %s", name)
		}
	}
	stranded, err := r.tr.Reflog(r.ctx, "STRANDED")
	require.NoError(r.rec, err)
	assert.Empty(r.rec, stranded, "nothing was kept off a branch")
}

// checkFsck checks that Fsck finds nothing wrong and counts what the
// model holds.
func (r *modelRun) checkFsck() {
	rep, err := r.tr.Fsck(r.ctx)
	require.NoError(r.rec, err, "Fsck")
	assert.True(r.rec, rep.OK(), "fsck problems: %v", rep.Problems)
	texts, entries := map[string]bool{}, 0
	for _, c := range r.m.commits {
		texts[c.text] = true
	}
	for _, es := range r.m.reflogs {
		entries += len(es)
	}
	assert.Equal(r.rec, len(r.m.commits), rep.Commits, "fsck: commits")
	assert.Equal(r.rec, len(texts), rep.Blobs, "fsck: blobs")
	assert.Equal(r.rec, entries, rep.ReflogEntries, "fsck: reflog entries")
	assert.Zero(r.rec, rep.UnfinishedImports, "fsck: unfinished imports")
}
