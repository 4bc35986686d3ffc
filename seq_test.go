package tract_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// longHistory commits a chain of every kind of commit, longer than several
// pages of the paged walks, plus an orphan chain.
func longHistory(t *testing.T, tr *tract.Tract, n int) {
	t.Helper()
	ctx := context.Background()
	msgs := chain(n, 30, "long")
	for i := range msgs {
		switch i % 7 {
		case 3:
			msgs[i].Kind = tract.KindNote
		case 5:
			msgs[i].Kind = tract.KindSteering
			msgs[i].Role = tract.RoleUser
		case 6:
			msgs[i].Kind = tract.KindSummary
		}
	}
	_, err := tr.Import(ctx, msgs)
	require.NoError(t, err)
	_, err = tr.User(ctx, "soon orphaned")
	require.NoError(t, err)
	_, err = tr.Reset(ctx, "HEAD~1", tract.Soft)
	require.NoError(t, err)
}

// CompileSeq sends what Compile sends (their code is separate: Compile
// keeps a cache), with and without notes, across many pages.
func TestCompileSeq_SameAsCompile(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	longHistory(t, tr, 9000)
	for _, opts := range [][]tract.CompileOption{nil, {tract.IncludeNotes()}, {tract.CompileAt("HEAD~4000")}} {
		want, err := tr.Compile(ctx, opts...)
		require.NoError(t, err)
		var got []tract.Message
		for m, err := range tr.CompileSeq(ctx, opts...) {
			require.NoError(t, err)
			got = append(got, m)
		}
		assert.Equal(t, want, got)
	}
	for _, err := range newTract(t).CompileSeq(ctx) {
		require.NoError(t, err)
		t.Fatal("an unborn branch compiles to nothing")
	}
}

// The paged walks hold no transaction while the caller has a commit in
// hand: another handle commits (and would wait for the lock, then fail)
// in the middle of each walk.
func TestSeqs_HoldNoLockBetweenPages(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	longHistory(t, tr, 700)
	other, err := tract.Open(tr.Path(), tract.WithNoSync(), tract.WithLockTimeout(2*time.Second))
	require.NoError(t, err)
	defer other.Close()
	o, err := tr.Outline(ctx)
	require.NoError(t, err)
	walks := map[string]func(yield func(error) bool){
		"LogSeq": func(yield func(error) bool) {
			for _, err := range tr.LogSeq(ctx) {
				if !yield(err) {
					return
				}
			}
		},
		"CompileSeq": func(yield func(error) bool) {
			for _, err := range tr.CompileSeq(ctx) {
				if !yield(err) {
					return
				}
			}
		},
		"Outline.Infos": func(yield func(error) bool) {
			for _, err := range o.Infos(ctx, o.Commits) {
				if !yield(err) {
					return
				}
			}
		},
	}
	for name, walk := range walks {
		t.Run(name, func(t *testing.T) {
			n := 0
			for err := range walk {
				require.NoError(t, err)
				if n == 300 {
					_, err := other.OnBranch("main").Note(ctx, "written mid-walk by "+name)
					require.NoError(t, err)
				}
				n++
			}
			assert.Greater(t, n, 300)
		})
	}
}

// Outline and its Infos give what LogAll gives.
func TestOutline_SameAsLogAll(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	longHistory(t, tr, 600)
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	o, err := tr.Outline(ctx)
	require.NoError(t, err)
	require.Len(t, o.Commits, len(all.Commits))
	for i, h := range o.Commits {
		assert.Equal(t, all.Commits[i].Hash, h)
	}
	require.Len(t, o.Orphans, 1)
	assert.Equal(t, "soon orphaned", all.Orphans[0].Commits[0].Text)
	assert.Equal(t, all.Orphans[0].Fork, o.Orphans[0].Fork)
	assert.Equal(t, all.Orphans[0].Reason, o.Orphans[0].Reason)
	assert.Len(t, o.Orphans[0].Commits, 1)
	n := 0
	for ci, err := range o.Infos(ctx, o.Commits) {
		require.NoError(t, err)
		assert.Equal(t, all.Commits[n], ci)
		n++
	}
	assert.Equal(t, len(all.Commits), n)
}

// Infos reads a page ahead while the caller takes the one before: over
// several pages it gives what LogAll gives, in order, and a caller that
// stops midway leaves no read running (the handle then closes at once).
func TestOutline_InfosReadsAheadInOrder(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	longHistory(t, tr, 2600) // three pages of Infos
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	o, err := tr.Outline(ctx)
	require.NoError(t, err)
	n := 0
	for ci, err := range o.Infos(ctx, o.Commits) {
		require.NoError(t, err)
		require.Equal(t, all.Commits[n].Hash, ci.Hash)
		n++
	}
	assert.Equal(t, len(all.Commits), n)

	n = 0
	for _, err := range o.Infos(ctx, o.Commits) {
		require.NoError(t, err)
		if n++; n == 1500 {
			break
		}
	}
	require.NoError(t, tr.Close())

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, err := range o.Infos(cancelled, o.Commits) {
		assert.ErrorIs(t, err, context.Canceled)
	}
}
