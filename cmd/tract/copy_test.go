package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

func TestNewCmdCopy_Args(t *testing.T) {
	cases := []struct {
		args    []string
		want    CopyOptions
		wantErr string
	}{
		{args: []string{"a.db", "b.db"}, want: CopyOptions{Src: "a.db", Dst: "b.db"}},
		{args: []string{"a.db", "b.db", "--json"}, want: CopyOptions{Src: "a.db", Dst: "b.db", JSON: true}},
		{args: []string{"a.db"}, wantErr: "two arguments, SRC and DST"},
		{args: []string{"a.db", "b.db", "c.db"}, wantErr: "two arguments, SRC and DST"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			checkParse(t, newCmdCopy, tc.args, tc.want, tc.wantErr)
		})
	}
}

func TestCopyRun_ReportAndNonEmptyDestination(t *testing.T) {
	ctx := context.Background()
	f, out, _ := testFactory(t, nil)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	tr, err := tract.Init(src)
	require.NoError(t, err)
	_, err = tr.User(ctx, "hello")
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	dst := filepath.Join(dir, "dst.db")

	require.NoError(t, copyRun(ctx, &CopyOptions{Factory: f, Src: src, Dst: dst}))
	assert.Regexp(t, "^Copied 1 commit and 1 blob \\([^,)]+, every one re-hashed\\), 2 refs and 2 reflog entries from "+
		regexp.QuoteMeta(src)+" to "+regexp.QuoteMeta(dst)+"\n$", out.String())

	err = copyRun(ctx, &CopyOptions{Factory: f, Src: src, Dst: dst})
	require.ErrorIs(t, err, tract.ErrNotEmpty)
	assert.Equal(t, exitUsage, exitCode(err))
	assert.Contains(t, err.Error(), "does not exist yet")
}

// What copy and salvage say about another run's partial file: wait for a
// running one; remove, with the command, one they could not.
func TestPartialHint(t *testing.T) {
	busy := fmt.Errorf("copy to d.db: %w (.d.db.tract-partial-00 is open)", tract.ErrDestinationBusy)
	assert.Equal(t, "Wait for it to finish, or stop it; the next run removes a partial file no one has open.", partialHint(busy))
	left := fmt.Errorf("copy to d.db: %w", &tract.LeftoverError{Path: "/tmp/my dir/.d.db.tract-partial-00", Err: fs.ErrPermission})
	assert.Equal(t, "Remove it, then run the command again:\n  rm '/tmp/my dir/.d.db.tract-partial-00'", partialHint(left))
	assert.Equal(t, "cannot remove /tmp/my dir/.d.db.tract-partial-00, which a killed copy or salvage left: permission denied", errors.Unwrap(left).Error())
	assert.Empty(t, partialHint(errors.New("other")))
}
