package turn_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/turn"
)

// ReadLast classifies a branch's last turn from its commits, reading
// more of them only when the first look ends inside the turn.
func TestReadLast(t *testing.T) {
	type c struct {
		kind dag.Kind
		role dag.Role
		tool bool
	}
	var (
		sys  = c{dag.KindMessage, dag.RoleSystem, false}
		user = c{dag.KindMessage, dag.RoleUser, false}
		ans  = c{dag.KindMessage, dag.RoleAssistant, false}
		call = c{dag.KindMessage, dag.RoleAssistant, true}
		res  = c{dag.KindMessage, dag.RoleTool, true}
		fail = c{dag.KindError, dag.RoleSystem, false}
		note = c{dag.KindNote, dag.RoleSystem, false}
	)
	for _, tc := range []struct {
		name    string
		chain   []c // oldest first
		state   turn.State
		commits int // the turn's commits; 0: ErrNoTurn
		errors  int
	}{
		{"empty", nil, 0, 0, 0},
		{"system prompt", []c{sys}, 0, 0, 0},
		{"answered", []c{sys, user, ans}, turn.Answered, 2, 0},
		{"answered with a note", []c{user, ans, note}, turn.Answered, 3, 0},
		{"answered after tool steps", []c{user, call, res, ans}, turn.Answered, 4, 0},
		{"unanswered", []c{user, ans, user}, turn.Unanswered, 1, 0},
		{"failed", []c{user, fail, note}, turn.Unanswered, 3, 1},
		{"stopped amid its tools", []c{user, call, res, fail}, turn.Unanswered, 4, 1},
		{"not sent", []c{user, ans, fail, note, fail}, turn.NotSent, 3, 2},
		{"assistant alone", []c{ans}, 0, 0, 0},
		{"long run of errors", append([]c{user}, repeat(fail, 20)...), turn.Unanswered, 21, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs []turn.LastCommit // newest first
			var parent dag.Hash
			for i, x := range tc.chain {
				h := dag.Sum(fmt.Appendf(nil, "%d", i))
				cs = append([]turn.LastCommit{{Hash: h, Parent: parent, Kind: x.kind, Role: x.role, ToolStep: x.tool}}, cs...)
				parent = h
			}
			reads := 0
			last, err := turn.ReadLast(func(limit int) ([]turn.LastCommit, error) {
				reads++
				return cs[:min(limit, len(cs))], nil
			})
			if tc.commits == 0 {
				assert.ErrorIs(t, err, turn.ErrNoTurn)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.state, last.State)
			assert.Equal(t, tc.commits, last.Commits)
			assert.Equal(t, tc.errors, last.Errors)
			assert.Equal(t, cs[0].Hash, last.Tip)
			assert.Equal(t, cs[tc.commits-1].Hash, last.First)
			assert.Equal(t, cs[tc.commits-1].Parent, last.Base)
			if len(cs) < 8 {
				assert.Equal(t, 1, reads, "a short branch is read once")
			}
		})
	}
}

func repeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}
