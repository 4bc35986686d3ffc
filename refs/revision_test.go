package refs_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/fuzzcheck"
	"github.com/tractdag/tract/refs"
)

func TestParseRevision(t *testing.T) {
	tests := []struct {
		in    string
		base  string
		steps []refs.Step
	}{
		{"HEAD", "HEAD", nil},
		{"ORIG_HEAD", "ORIG_HEAD", nil},
		{"feature/x", "feature/x", nil},
		{"main~2", "main", []refs.Step{{Op: '~', N: 2}}},
		{"abc1^", "abc1", []refs.Step{{Op: '^', N: 1}}},
		{"x^2", "x", []refs.Step{{Op: '^', N: 2}}},
		{"x^0", "x", []refs.Step{{Op: '^', N: 0}}},
		{"x~", "x", []refs.Step{{Op: '~', N: 1}}},
		{"x~0", "x", []refs.Step{{Op: '~', N: 0}}},
		{"x~^~3", "x", []refs.Step{{Op: '~', N: 1}, {Op: '^', N: 1}, {Op: '~', N: 3}}},
		{"HEAD^^", "HEAD", []refs.Step{{Op: '^', N: 1}, {Op: '^', N: 1}}},
		{"HEAD^1^1", "HEAD", []refs.Step{{Op: '^', N: 1}, {Op: '^', N: 1}}},
		{"x~10", "x", []refs.Step{{Op: '~', N: 10}}},
		{"x~010", "x", []refs.Step{{Op: '~', N: 10}}},
		{"HEAD@{0}", "HEAD", nil},
		{"main@{12}~2", "main", []refs.Step{{Op: '~', N: 2}}},
		{"feature/x@{1}^", "feature/x", []refs.Step{{Op: '^', N: 1}}},
		{"STRANDED@{3}", "STRANDED", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			rev, err := refs.ParseRevision(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.base, rev.Base)
			assert.Equal(t, strings.Contains(tt.in, "@{"), rev.InReflog)
			assert.Equal(t, tt.steps, rev.Steps)
			assert.Equal(t, tt.in, rev.String(), "String quotes the revision as written")

			again, err := refs.ParseRevision(rev.String())
			require.NoError(t, err)
			assert.Equal(t, rev, again, "String renders a revision that parses back to the same steps")
		})
	}
}

// A revision built, or changed, by hand has no text of its own: String
// renders its steps.
func TestRevision_StringOfABuiltRevisionIsCanonical(t *testing.T) {
	built := refs.Revision{Base: "HEAD", Steps: []refs.Step{{Op: '^', N: 1}, {Op: '~', N: 2}}}
	assert.Equal(t, "HEAD^1~2", built.String())

	rev, err := refs.ParseRevision("main^^")
	require.NoError(t, err)
	rev.Steps = append(rev.Steps, refs.Step{Op: '~', N: 3})
	assert.Equal(t, "main^1^1~3", rev.String())
	rev, err = refs.ParseRevision("main~")
	require.NoError(t, err)
	rev.Base = "side"
	assert.Equal(t, "side~1", rev.String())
}

func TestParseRevision_RejectsBadSyntax(t *testing.T) {
	tests := []struct {
		in, why string
	}{
		{"", "the revision is empty"},
		{"~1", "needs a name or hash"},
		{"^", "needs a name or hash"},
		{"main~x", `unexpected "x" after ~`},
		{"main~1x", `unexpected "x" after ~`},
		{"main^2a~1", `unexpected "a~1" after ^`},
		{"main~99999999999", "too large"},
		{"@{1}", "name a ref before @{N}"},
		{"main@{1", "only REF@{N}"},
		{"main@{}", "only REF@{N}"},
		{"main@{-1}", "only REF@{N}"},
		{"main@{+1}", "only REF@{N}"},
		{"main@{yesterday}", "only REF@{N}"},
		{"main@{1}x", "only REF@{N}"},
		{"main@{1}@{2}", "only REF@{N}"},
		{"main@{99999999999}", "too large"},
		{"main~1@{1}", `unexpected "@{1}" after ~`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := refs.ParseRevision(tt.in)
			require.Error(t, err)
			assert.ErrorIs(t, err, refs.ErrBadRevision)
			var pos *refs.ReflogPositionError
			if assert.Equal(t, strings.Contains(tt.why, "only REF@{N}"), errors.As(err, &pos), "a *ReflogPositionError") && pos != nil {
				assert.Equal(t, tt.in, pos.Rev)
				assert.Equal(t, "main", pos.Ref)
			}
			assert.Contains(t, err.Error(), tt.why)
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", tt.in))
		})
	}
}

// fakeRepo is an in-memory refs.Resolver. Its commits are keyed by
// hand-made hashes so tests control prefixes.
type fakeRepo struct {
	refs    map[string]refs.Ref
	commits map[dag.Hash]*dag.Commit
	reflogs map[string][]refs.Entry // oldest first
	err     error                   // returned by every method when set
}

func (f *fakeRepo) ReflogTail(name string, n int) ([]refs.Entry, error) {
	if f.err != nil {
		return nil, f.err
	}
	es := f.reflogs[name]
	return es[max(len(es)-n, 0):], nil
}

func (f *fakeRepo) ResolveRef(name string) (dag.Hash, bool, error) {
	if f.err != nil {
		return dag.Hash{}, false, f.err
	}
	for range 5 {
		r, ok := f.refs[name]
		if !ok {
			return dag.Hash{}, false, nil
		}
		if !r.IsSymbolic() {
			return r.Hash, true, nil
		}
		name = r.Target
	}
	return dag.Hash{}, false, errors.New("too deep")
}

func (f *fakeRepo) CommitsWithPrefix(prefix string, limit int) ([]dag.Hash, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []dag.Hash
	for h := range f.commits {
		if strings.HasPrefix(h.String(), prefix) {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (f *fakeRepo) Commit(h dag.Hash) (*dag.Commit, error) {
	if c, ok := f.commits[h]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("commit %s: %w", h.Short(), refs.ErrNotFound)
}

// hx makes a hash whose hex form starts with prefix (the rest is zeros).
func hx(prefix string) dag.Hash {
	h, err := dag.ParseHash(prefix + strings.Repeat("0", 64-len(prefix)))
	if err != nil {
		panic(err)
	}
	return h
}

// Hashes of the fake history:
//
//	root ← c1 ← c2 ← c3 ← merge   (main, HEAD)
//	        ↖            ↙ second parent
//	         side ───────
//
// c1 and c2 share the prefix "abcd"; ORIG_HEAD is c2.
var (
	hRoot  = hx("0123")
	hC1    = hx("abcd1")
	hC2    = hx("abcd2")
	hC3    = hx("c3c3")
	hSide  = hx("5151")
	hMerge = hx("e0e0")
)

func newFakeRepo() *fakeRepo {
	commit := func(parents ...dag.Hash) *dag.Commit {
		return &dag.Commit{Parents: parents, Kind: dag.KindMessage, Role: dag.RoleUser}
	}
	return &fakeRepo{
		refs: map[string]refs.Ref{
			refs.HEAD:                 {Name: refs.HEAD, Target: "refs/heads/main"},
			"refs/heads/main":         {Name: "refs/heads/main", Hash: hMerge},
			"refs/heads/side":         {Name: "refs/heads/side", Hash: hSide},
			"refs/heads/feature/deep": {Name: "refs/heads/feature/deep", Hash: hC1},
			refs.OrigHead:             {Name: refs.OrigHead, Hash: hC2},
		},
		commits: map[dag.Hash]*dag.Commit{
			hRoot:  commit(),
			hC1:    commit(hRoot),
			hC2:    commit(hC1),
			hC3:    commit(hC2),
			hSide:  commit(hC1),
			hMerge: commit(hC3, hSide),
		},
	}
}

func TestResolve_FindsCommits(t *testing.T) {
	tests := []struct {
		expr string
		want dag.Hash
	}{
		{"HEAD", hMerge},
		{"ORIG_HEAD", hC2},
		{"main", hMerge},
		{"side", hSide},
		{"feature/deep", hC1},
		{"refs/heads/main", hMerge},
		{hC1.String(), hC1},
		{strings.ToUpper(hC3.String()), hC3},
		{"c3c3", hC3},
		{"C3C3", hC3},
		{"abcd2", hC2},
		{"HEAD^0", hMerge},
		{"HEAD~0", hMerge},
		{"HEAD^", hC3},
		{"HEAD~", hC3},
		{"main~2", hC2},
		{"main~4", hRoot},
		{"main^2", hSide},
		{"main^2~1", hC1},
		{"main~^~1", hC1},
		{"ORIG_HEAD~2", hRoot},
		{"c3c3^", hC2},
	}
	repo := newFakeRepo()
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := refs.Resolve(repo, tt.expr)
			require.NoError(t, err)
			assert.Equal(t, tt.want.String(), got.String())
		})
	}
}

// REF@{N} is the commit of REF's reflog entry N moves back, newest first,
// as 'tract reflog' numbers them.
func TestResolve_ReflogPositions(t *testing.T) {
	repo := newFakeRepo()
	entry := func(old, new dag.Hash) refs.Entry { return refs.Entry{Old: old, New: new, Message: "moved"} }
	repo.reflogs = map[string][]refs.Entry{
		refs.HEAD:                {entry(dag.Hash{}, hRoot), entry(hRoot, hC1), entry(hC1, hC3), entry(hC3, hMerge)},
		"refs/heads/main":        {entry(dag.Hash{}, hC2), entry(hC2, dag.Hash{}), entry(dag.Hash{}, hMerge)},
		"refs/heads/refs/x":      {entry(dag.Hash{}, hSide)},
		refs.Stranded:            {entry(hC1, hSide)},
		"refs/heads/feature/new": nil,
	}
	for _, tt := range []struct {
		expr string
		want dag.Hash
	}{
		{"HEAD@{0}", hMerge},
		{"HEAD@{1}", hC3},
		{"HEAD@{3}", hRoot},
		{"HEAD@{1}~2", hC1},
		{"HEAD@{2}^", hRoot},
		{"main@{0}", hMerge},
		{"main@{2}", hC2},
		{"refs/heads/main@{2}", hC2},
		{"refs/x@{0}", hSide},
		{"STRANDED@{0}", hSide},
	} {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := refs.Resolve(repo, tt.expr)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	for _, tt := range []struct{ expr, err string }{
		{"HEAD@{4}", `unknown revision "HEAD@{4}": the reflog of HEAD has 4 entries, HEAD@{0} to HEAD@{3}`},
		{"main@{1}", `unknown revision "main@{1}": main pointed at no commit then (moved)`},
		{"side@{0}", `unknown revision "side@{0}": side has no reflog`},
		{"nosuch@{0}", `unknown revision "nosuch@{0}": nosuch has no reflog`},
		{"HEAD@{3}~1", `unknown revision "HEAD@{3}~1": commit 01230000 (HEAD@{3}) has no parent`},
	} {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := refs.Resolve(repo, tt.expr)
			assert.ErrorIs(t, err, refs.ErrUnknownRevision)
			assert.EqualError(t, err, tt.err)
		})
	}
}

// A Resolver that cannot read reflogs says so for REF@{N}.
func TestResolve_ReflogPositionNeedsAReflogResolver(t *testing.T) {
	_, err := refs.Resolve(struct{ refs.Resolver }{newFakeRepo()}, "HEAD@{1}")
	assert.ErrorIs(t, err, refs.ErrUnknownRevision)
	assert.ErrorContains(t, err, "reflogs cannot be read here")
}

func TestResolve_BranchNameWinsOverAbbreviatedHash(t *testing.T) {
	repo := newFakeRepo()
	repo.refs["refs/heads/c3c3"] = refs.Ref{Name: "refs/heads/c3c3", Hash: hRoot}
	got, err := refs.Resolve(repo, "c3c3")
	require.NoError(t, err)
	assert.Equal(t, hRoot, got)
}

func TestResolve_AmbiguousPrefixListsCandidates(t *testing.T) {
	_, err := refs.Resolve(newFakeRepo(), "abcd~1")
	var amb *refs.AmbiguousError
	require.ErrorAs(t, err, &amb)
	assert.Equal(t, "abcd", amb.Prefix)
	assert.Equal(t, []dag.Hash{hC1, hC2}, amb.Candidates)
	assert.Contains(t, err.Error(), `ambiguous revision "abcd": it matches 2 commits`)
	assert.Contains(t, err.Error(), hC1.String()[:16])
	assert.Contains(t, err.Error(), hC2.String()[:16])
	assert.Contains(t, err.Error(), "use more characters")
}

func TestResolve_AmbiguousPrefixListsAtMostTenCandidates(t *testing.T) {
	repo := newFakeRepo()
	for i := range 15 {
		repo.commits[hx(fmt.Sprintf("dddd%02x", i))] = &dag.Commit{}
	}
	_, err := refs.Resolve(repo, "dddd")
	var amb *refs.AmbiguousError
	require.ErrorAs(t, err, &amb)
	assert.Len(t, amb.Candidates, 10)
}

func TestResolve_Errors(t *testing.T) {
	tests := []struct {
		expr    string
		wantIs  error
		wantMsg string
	}{
		{"nope", refs.ErrUnknownRevision, `unknown revision "nope": not a branch, ref or commit hash`},
		{"beef", refs.ErrUnknownRevision, "not a branch, ref or commit hash"},
		{"abc", refs.ErrUnknownRevision, "abbreviated hashes need at least 4 characters"},
		{"a", refs.ErrUnknownRevision, "at least 4 characters"},
		{"refs/heads/gone", refs.ErrUnknownRevision, `"refs/heads/gone"`},
		{"main~x", refs.ErrBadRevision, "unexpected"},
		{"", refs.ErrBadRevision, `bad revision syntax "": the revision is empty`},
	}
	repo := newFakeRepo()
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := refs.Resolve(repo, tt.expr)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.wantIs)
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
	_, err := refs.Resolve(repo, "nope")
	assert.True(t, refs.IsNotFound(err))
}

// A step past the root or past a commit's parents names the revision as
// written, the commit where it failed (and how the user would name it),
// and how many parents that commit has.
func TestResolve_StepPastTheParentsSaysWhatIsTrue(t *testing.T) {
	root, c1, c3, merge := hRoot.Short(), hC1.Short(), hC3.Short(), hMerge.Short()
	tests := []struct {
		expr, want string
	}{
		{"main~5", `unknown revision "main~5": commit ` + root + ` (main~4) has no parent`},
		{"main~9", `unknown revision "main~9": commit ` + root + ` (main~4) has no parent`},
		{"HEAD^^^^^", `unknown revision "HEAD^^^^^": commit ` + root + ` (HEAD^^^^) has no parent`},
		{"HEAD^1^1^1^1^1", `unknown revision "HEAD^1^1^1^1^1": commit ` + root + ` (HEAD^1^1^1^1) has no parent`},
		{"HEAD~~3~", `unknown revision "HEAD~~3~": commit ` + root + ` (HEAD~~3) has no parent`},
		{"0123^", `unknown revision "0123^": commit ` + root + ` (0123) has no parent`},
		{"0123~1", `unknown revision "0123~1": commit ` + root + ` (0123) has no parent`},
		{"main^3", `unknown revision "main^3": commit ` + merge + ` (main) has 2 parents`},
		{"HEAD^^2", `unknown revision "HEAD^^2": commit ` + c3 + ` (HEAD^) has 1 parent`},
		{"side~1^2", `unknown revision "side~1^2": commit ` + c1 + ` (side~1) has 1 parent`},
		{"main^2~3", `unknown revision "main^2~3": commit ` + root + ` (main^2~2) has no parent`},
	}
	repo := newFakeRepo()
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := refs.Resolve(repo, tt.expr)
			require.ErrorIs(t, err, refs.ErrUnknownRevision)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestResolve_UnbornHeadSaysTheBranchHasNoCommits(t *testing.T) {
	repo := &fakeRepo{refs: map[string]refs.Ref{refs.HEAD: {Name: refs.HEAD, Target: "refs/heads/main"}}}
	for _, expr := range []string{"HEAD", "HEAD~1"} {
		_, err := refs.Resolve(repo, expr)
		assert.ErrorIs(t, err, refs.ErrUnknownRevision)
		assert.ErrorContains(t, err, "the current branch has no commits yet")
	}
}

func TestResolve_MissingCommitDuringStepsIsNotFound(t *testing.T) {
	repo := newFakeRepo()
	delete(repo.commits, hC3)
	_, err := refs.Resolve(repo, "main~2")
	assert.ErrorIs(t, err, refs.ErrNotFound)
	assert.ErrorContains(t, err, "resolve main~2")
	assert.True(t, refs.IsNotFound(err))
}

func TestResolve_PassesResolverErrorsThrough(t *testing.T) {
	boom := errors.New("disk on fire")
	repo := newFakeRepo()
	repo.err = boom
	for _, expr := range []string{"HEAD", "abcd"} {
		_, err := refs.Resolve(repo, expr)
		assert.ErrorIs(t, err, boom, expr)
	}
}

func FuzzParseRevision(f *testing.F) {
	for _, s := range []string{"HEAD", "main~2", "x~^~3", "abc1^2", "~", "a~b", "HEAD@{1}~2", "a@{01}^"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rev, err := refs.ParseRevision(s)
		if err != nil {
			fuzzcheck.UserError(t, err)
			if !errors.Is(err, refs.ErrBadRevision) {
				t.Fatalf("%q: error %v does not wrap ErrBadRevision", s, err)
			}
			return
		}
		again, err := refs.ParseRevision(rev.String())
		if err != nil {
			t.Fatalf("String() of %q gives %q, which does not parse: %v", s, rev.String(), err)
		}
		if again.String() != rev.String() {
			t.Fatalf("%q → %q → %q", s, rev.String(), again.String())
		}
	})
}

// chainRepo is a fakeRepo that is a refs.ChainResolver, counting the
// calls of FirstParents.
type chainRepo struct {
	*fakeRepo
	calls int
}

func (c *chainRepo) FirstParents(h dag.Hash, n int) ([]dag.Hash, error) {
	c.calls++
	var out []dag.Hash
	for len(out) < n {
		out = append(out, h)
		cm, err := c.Commit(h)
		if err != nil {
			return nil, err
		}
		if len(cm.Parents) == 0 {
			break
		}
		h = cm.Parents[0]
	}
	return out, nil
}

// A ChainResolver follows a ~N step in one call, with the answers and
// errors of one step at a time.
func TestResolve_ChainResolverGivesTheSameAnswers(t *testing.T) {
	for _, expr := range []string{
		"main~2", "main~3", "main~4", "main~5", "main~9", "main^2~1", "main~^~1", "HEAD~~3~", "ORIG_HEAD~2",
		"0123~1", "main~1",
	} {
		t.Run(expr, func(t *testing.T) {
			want, wantErr := refs.Resolve(newFakeRepo(), expr)
			repo := &chainRepo{fakeRepo: newFakeRepo()}
			got, err := refs.Resolve(repo, expr)
			assert.Equal(t, want, got)
			if wantErr == nil {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, wantErr.Error())
			}
			rev, perr := refs.ParseRevision(expr)
			require.NoError(t, perr)
			calls := 0
			for _, s := range rev.Steps {
				if s.Op == '~' && s.N > 1 {
					calls++
				}
			}
			assert.Equal(t, calls, repo.calls, "a call per step of more than one commit")
		})
	}
}
