package tract_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/testinput"
)

// Import through ReadMessages is all or nothing at every limit, also when
// the input spans several batches (a pack) before the limit is reached.
func TestImportSeq_RejectedInputLeavesNothing(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	_, err := tr.User(ctx, "before")
	require.NoError(t, err)
	before := commitCount(t, tr)
	for _, tc := range []struct {
		name  string
		in    io.Reader
		which tract.SizeLimit
	}{
		{"endless messages", testinput.NewGenerated(``, "{\"role\":\"user\",\"content\":\"hi\"}\n", "", -1), tract.LimitInputSize},
		{"a message too long after many", testinput.NewGenerated(``, "{\"role\":\"user\",\"content\":\"hi\"}\n", `{"role":"user","content":"`+strings.Repeat("a", 4097)+`"}`, 5000), tract.LimitMessageSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := tract.ReadLimits(tract.Limits{MessageSize: 4096, InputSize: 512 << 10})
			_, err := tr.ImportSeq(ctx, tract.ReadMessages(tc.in, lim), small)
			testinput.RequireTooLarge(t, err, tc.which)
			assert.Equal(t, before, commitCount(t, tr), "nothing was written")
			assert.Empty(t, unpublished(t, tr))
			msgs, err := tr.Compile(ctx)
			require.NoError(t, err)
			assert.Len(t, msgs, 1)
		})
	}
}
