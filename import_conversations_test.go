package tract_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/export"
)

// conversationsJSONL is n lines of the openai format, conversation i of
// i%3+1 user and assistant messages, a system prompt shared by all.
func conversationsJSONL(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`{"messages":[{"role":"system","content":"Be brief."}`)
		for j := range i%3 + 1 {
			fmt.Fprintf(&b, `,{"role":"user","content":"q%d.%d"},{"role":"assistant","content":"a%d.%d"}`, i, j, i, j)
		}
		b.WriteString("]}\n")
	}
	return b.String()
}

// An input larger than a batch is written as a pack and published with
// every branch in one last transaction: the same branches, commits,
// counters and export as an import in one transaction, and no pack left.
func TestImportConversations_StreamsThroughAPack(t *testing.T) {
	ctx := context.Background()
	in := conversationsJSONL(500)
	whole := newTract(t)
	want, err := whole.ImportConversations(ctx, "c", tract.ReadConversations(strings.NewReader(in)))
	require.NoError(t, err)

	tr := newTract(t)
	got, err := tr.ImportConversations(ctx, "c", tract.ReadConversations(strings.NewReader(in)), small)
	require.NoError(t, err)
	require.Len(t, got, 500)
	assert.Equal(t, "c-001", got[0].Name)
	assert.Equal(t, "c-500", got[499].Name)
	for i := range got {
		// The same commits: the clock differs, so compare the texts.
		assert.Equal(t, want[i].Name, got[i].Name)
	}
	assert.Empty(t, unpublished(t, tr), "the pack was published")
	rep, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	commits := 0
	for i := range 500 {
		commits += 1 + 2*(i%3+1) // a chain of its own each, from its own root
	}
	assert.Equal(t, commits, rep.Commits, "fsck also recomputed every counters entry")

	var out bytes.Buffer
	_, err = tr.Export(ctx, &out, export.OpenAI, tract.ExportAll())
	require.NoError(t, err)
	assert.Equal(t, in, out.String(), "exported back as it came")
	entries, err := tr.Reflog(ctx, "refs/heads/c-250")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, fmt.Sprintf("import: conversation 250 of 500, %d commits", 1+2*(249%3+1)), entries[0].Message)
}

// A failure after the input outgrew a batch (a bad line, a broken
// stream, a cancelled ctx, a branch that exists) imports nothing and
// leaves no pack.
func TestImportConversations_FailureAfterABatchLeavesNothing(t *testing.T) {
	boom := errors.New("the source broke")
	lines := strings.SplitAfter(conversationsJSONL(400), "\n")
	lines = lines[:len(lines)-1]
	seq := func(ctx context.Context, cancel context.CancelFunc, badAt int, bad string, fail error) iter.Seq2[tract.Conversation, error] {
		return func(yield func(tract.Conversation, error) bool) {
			for i, l := range lines {
				if i == badAt {
					if cancel != nil {
						cancel()
					}
					if fail != nil {
						yield(tract.Conversation{}, fail)
						return
					}
					if bad != "" {
						l = bad
					}
				}
				for c, err := range tract.ReadConversations(strings.NewReader(l)) {
					c.Line = i + 1
					if !yield(c, err) {
						return
					}
				}
			}
		}
	}
	for _, tc := range []struct {
		name   string
		badAt  int
		bad    string
		fail   error
		cancel bool
		exists bool
		want   string
	}{
		{name: "an invalid message late", badAt: 350, bad: `{"messages":[{"role":"wizard","content":"x"}]}`, want: `invalid role "wizard"`},
		{name: "a failing stream", badAt: 300, fail: boom, want: "the source broke"},
		{name: "a cancelled context", badAt: 300, cancel: true, want: "context canceled"},
		{name: "a branch that exists", badAt: -1, exists: true, want: "branch already exists: c-399"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTract(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			before := commitChain(t, tr, 2, "before")
			if tc.exists {
				_, err := tr.CreateBranch(ctx, "c-399", "")
				require.NoError(t, err)
			}
			var c context.CancelFunc
			if tc.cancel {
				c = cancel
			}
			_, err := tr.ImportConversations(ctx, "c", seq(ctx, c, tc.badAt, tc.bad, tc.fail), small)
			require.ErrorContains(t, err, tc.want)
			if tc.fail != nil {
				assert.ErrorIs(t, err, tc.fail)
			}
			assert.Equal(t, 2, commitCount(t, tr), "no commit imported")
			assert.Empty(t, unpublished(t, tr), "the pack was dropped")
			bs, err := tr.Branches(context.Background())
			require.NoError(t, err)
			assert.Len(t, bs, 1+btoi(tc.exists))
			tip, err := tr.Resolve(context.Background(), "HEAD")
			require.NoError(t, err)
			assert.Equal(t, before[1], tip)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
