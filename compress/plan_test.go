package compress_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/compress"
	"github.com/tractdag/tract/dag"
)

// it returns a message item whose text is its name, hashed from the name.
func it(role dag.Role, name string) compress.Item {
	return compress.Item{Hash: dag.Sum([]byte(name)), Kind: dag.KindMessage, Role: role, Text: name}
}

func sys(name string) compress.Item  { return it(dag.RoleSystem, name) }
func user(name string) compress.Item { return it(dag.RoleUser, name) }
func asst(name string) compress.Item { return it(dag.RoleAssistant, name) }

func kind(k dag.Kind, i compress.Item) compress.Item { i.Kind = k; return i }
func pinned(i compress.Item) compress.Item           { i.Pinned = true; return i }

// layout renders a plan compactly: "keep(s1) sum(u1 a1)", then
// " drop(n1)" when items were dropped.
func layout(p *compress.PlanResult) string {
	var parts []string
	for _, g := range p.Groups {
		names := make([]string, len(g.Items))
		for i, it := range g.Items {
			names[i] = it.Text
		}
		if g.Keep {
			parts = append(parts, "keep("+strings.Join(names, " ")+")")
		} else {
			parts = append(parts, "sum("+strings.Join(names, " ")+")")
		}
	}
	if len(p.Dropped) > 0 {
		names := make([]string, len(p.Dropped))
		for i, it := range p.Dropped {
			names[i] = it.Text
		}
		parts = append(parts, "drop("+strings.Join(names, " ")+")")
	}
	return strings.Join(parts, " ")
}

func TestPlan_Layouts(t *testing.T) {
	tests := []struct {
		name  string
		items []compress.Item
		opts  []compress.PlanOption
		want  string
	}{
		{
			name:  "no pinned items: one group",
			items: []compress.Item{user("u1"), asst("a1"), user("u2")},
			want:  "sum(u1 a1 u2)",
		},
		{
			name:  "pinned system in the middle splits the run",
			items: []compress.Item{user("u1"), asst("a1"), sys("s1"), user("u2"), asst("a2")},
			want:  "sum(u1 a1) keep(s1) sum(u2 a2)",
		},
		{
			name:  "pinned at both ends",
			items: []compress.Item{sys("s1"), user("u1"), asst("a1"), sys("s2")},
			want:  "keep(s1) sum(u1 a1) keep(s2)",
		},
		{
			name:  "adjacent pinned items are groups of their own",
			items: []compress.Item{sys("s1"), sys("s2"), user("u1")},
			want:  "keep(s1) keep(s2) sum(u1)",
		},
		{
			name: "errors and notes dropped, the run goes on across them",
			items: []compress.Item{
				user("u1"), kind(dag.KindError, asst("e1")), kind(dag.KindNote, user("n1")), asst("a1"),
			},
			want: "sum(u1 a1) drop(e1 n1)",
		},
		{
			name:  "a dropped system note is not kept",
			items: []compress.Item{kind(dag.KindNote, sys("n1")), user("u1")},
			want:  "sum(u1) drop(n1)",
		},
		{
			name:  "explicitly pinned message kept",
			items: []compress.Item{user("u1"), pinned(asst("a1")), user("u2")},
			want:  "sum(u1) keep(a1) sum(u2)",
		},
		{
			name:  "explicitly pinned note kept",
			items: []compress.Item{user("u1"), pinned(kind(dag.KindNote, user("n1")))},
			want:  "sum(u1) keep(n1)",
		},
		{
			name:  "steering and summary kinds are summarized",
			items: []compress.Item{kind(dag.KindSummary, asst("old")), kind(dag.KindSteering, user("st"))},
			want:  "sum(old st)",
		},
		{
			name:  "PinRoles replaces the default",
			items: []compress.Item{sys("s1"), user("u1"), it(dag.RoleTool, "t1"), asst("a1")},
			opts:  []compress.PlanOption{compress.PinRoles(dag.RoleTool)},
			want:  "sum(s1 u1) keep(t1) sum(a1)",
		},
		{
			name:  "PinRoles with no roles pins nothing by role",
			items: []compress.Item{sys("s1"), pinned(user("u1")), asst("a1")},
			opts:  []compress.PlanOption{compress.PinRoles()},
			want:  "sum(s1) keep(u1) sum(a1)",
		},
		{
			name:  "PinFunc",
			items: []compress.Item{sys("s1"), user("keep me"), asst("a1")},
			opts: []compress.PlanOption{compress.PinFunc(func(i compress.Item) bool {
				return strings.HasPrefix(i.Text, "keep")
			})},
			want: "sum(s1) keep(keep me) sum(a1)",
		},
		{
			name:  "the last option wins",
			items: []compress.Item{sys("s1"), user("u1")},
			opts:  []compress.PlanOption{compress.PinRoles(dag.RoleUser), compress.PinRoles(dag.RoleSystem)},
			want:  "keep(s1) sum(u1)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := compress.Plan(tt.items, tt.opts...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, layout(p))
		})
	}
}

func TestPlan_PinnedSystemKeptInPlace(t *testing.T) {
	items := []compress.Item{sys("s1"), user("u1"), asst("a1"), sys("s2"), user("u2")}
	p, err := compress.Plan(items)
	require.NoError(t, err)

	require.Len(t, p.Groups, 4)
	assert.True(t, p.Groups[0].Keep)
	assert.Equal(t, []compress.Item{items[0]}, p.Groups[0].Items)
	assert.False(t, p.Groups[1].Keep)
	assert.Equal(t, []dag.Hash{items[1].Hash, items[2].Hash}, p.Groups[1].Sources())
	assert.True(t, p.Groups[2].Keep)
	assert.Equal(t, []compress.Item{items[3]}, p.Groups[2].Items)
	assert.Equal(t, 2, p.Summarized())
	assert.Empty(t, p.Dropped)
}

func TestPlan_Errors(t *testing.T) {
	tests := []struct {
		name    string
		items   []compress.Item
		wantIs  error
		wantMsg string
	}{
		{
			name:    "nil range",
			items:   nil,
			wantIs:  compress.ErrEmptyRange,
			wantMsg: "compress: empty range: no commits to compress",
		},
		{
			name:    "empty range",
			items:   []compress.Item{},
			wantIs:  compress.ErrEmptyRange,
			wantMsg: "compress: empty range: no commits to compress",
		},
		{
			name:    "only pinned",
			items:   []compress.Item{sys("s1"), pinned(user("u1"))},
			wantIs:  compress.ErrNothingToSummarize,
			wantMsg: "compress: nothing to summarize: every commit of the range (2 commits) is pinned (2) or dropped as an error or note (0)",
		},
		{
			name:    "only pinned and dropped",
			items:   []compress.Item{sys("s1"), kind(dag.KindError, asst("e1")), kind(dag.KindNote, user("n1"))},
			wantIs:  compress.ErrNothingToSummarize,
			wantMsg: "compress: nothing to summarize: every commit of the range (3 commits) is pinned (1) or dropped as an error or note (2)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := compress.Plan(tt.items)
			require.Error(t, err)
			assert.Nil(t, p)
			assert.ErrorIs(t, err, tt.wantIs)
			assert.EqualError(t, err, tt.wantMsg)
		})
	}
}

func TestPinRoles_CopiesItsArguments(t *testing.T) {
	roles := []dag.Role{dag.RoleTool}
	opt := compress.PinRoles(roles...)
	roles[0] = dag.RoleUser

	p, err := compress.Plan([]compress.Item{user("u1"), it(dag.RoleTool, "t1")}, opt)
	require.NoError(t, err)
	assert.Equal(t, "sum(u1) keep(t1)", layout(p))
}
