package tract_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// A repository in PostgreSQL opens by URL exactly as a file opens by
// path: Init, Open, OpenOrInit, FsckFile and OpenStore.
func TestDatabaseURL_OpensLikeAPath(t *testing.T) {
	ctx := context.Background()
	db := pgtest.RepositoryURL(t, pgtest.URL(t))
	require.True(t, tract.IsDatabaseURL(db))

	_, err := tract.Open(db)
	require.ErrorIs(t, err, tract.ErrNotRepository)

	r, err := tract.OpenOrInit(db, tract.WithClock(fixedClock()))
	require.NoError(t, err)
	assert.Equal(t, tract.Redact(db), r.Path())
	assert.Contains(t, r.Path(), ":xxxxx@")
	_, err = r.System(ctx, "You are terse.")
	require.NoError(t, err)
	_, err = r.User(ctx, "What is 2+2?")
	require.NoError(t, err)
	require.NoError(t, r.Close())

	_, err = tract.Init(db)
	require.ErrorIs(t, err, tract.ErrExists)

	r, err = tract.OpenOrInit(db)
	require.NoError(t, err, "OpenOrInit opens what is there")
	msgs, err := r.Compile(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	assert.Equal(t, "What is 2+2?", msgs[1].Content)
	require.NoError(t, r.Close())

	rep, err := tract.FsckFile(ctx, db)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, 2, rep.Commits)

	st, err := tract.OpenStore(ctx, db, false)
	require.NoError(t, err)
	assert.IsType(t, &postgres.Store{}, st)
	require.NoError(t, st.Close())

	r, err = tract.Open(db)
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Compact(ctx)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = tract.Salvage(ctx, db, t.TempDir()+"/new.db")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

// Two handles (as two processes on two machines would have) commit on
// one branch at once, many times: no commit is lost and the branch is
// one chain, as with a file.
func TestDatabaseURL_ConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	db := pgtest.RepositoryURL(t, pgtest.URL(t))
	first, err := tract.Init(db)
	require.NoError(t, err)
	defer first.Close()
	second, err := tract.Open(db)
	require.NoError(t, err)
	defer second.Close()

	const perWriter = 15
	var wg sync.WaitGroup
	for _, w := range []*tract.Tract{first, second} {
		wg.Go(func() {
			for range perWriter {
				_, err := w.User(ctx, "hello")
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	log, err := first.Log(ctx)
	require.NoError(t, err)
	assert.Len(t, log, 2*perWriter, "every commit is on the branch")
	rep, err := first.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
}

func TestMigrate_RefusesAFile(t *testing.T) {
	_, err := tract.Migrate(context.Background(), t.TempDir()+"/tract.db")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}
