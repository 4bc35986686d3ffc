package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/mcpserver"
	"github.com/tractdag/tract/retry"
)

const (
	badJSON  = `{"colors": ["red"`
	goodJSON = `{"colors":["red","green","blue"]}`
)

// fixture is a repository with a purified retry (its failed attempt an
// orphan), a note, and an escalation waiting for its answer.
type fixture struct {
	t *tract.Tract
	// user, accepted and failed are the turn's commits: the question,
	// the clean answer on the branch, the failed attempt off it.
	user, accepted, failed tract.Hash
	// escalation is the id of the waiting escalation (on branch "night").
	escalation string
}

func newFixture(t *testing.T, opts ...tract.Option) *fixture {
	t.Helper()
	ctx := context.Background()
	model := llm.NewScripted(llm.Reply{Content: badJSON})
	model.When("failed validation", llm.Reply{Content: goodJSON})
	model.When("Give numbers", llm.Reply{Content: "no numbers"})
	path := filepath.Join(t.TempDir(), "tract.db")
	tr, err := tract.Init(path, append([]tract.Option{tract.WithClient(model)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	_, err = tr.System(ctx, "You answer in JSON.")
	require.NoError(t, err)
	res, err := tr.Chat(ctx, "List three colours", tract.Validate(retry.JSON()))
	require.NoError(t, err)
	require.Equal(t, 2, res.Attempts)
	require.True(t, res.Purified)
	require.Len(t, res.History, 2)
	f := &fixture{t: tr, user: res.User, accepted: res.Commit, failed: res.History[0].Commit}

	_, err = tr.CreateBranch(ctx, "night", "")
	require.NoError(t, err)
	_, err = tr.OnBranch("night").Chat(ctx, "Give numbers", tract.Validate(retry.JSON()), tract.MaxAttempts(1),
		tract.Task("nightly-1"), tract.EscalateWait(tract.ExitWhenEscalated()))
	var waiting *tract.WaitingError
	require.ErrorAs(t, err, &waiting)
	f.escalation = waiting.ID
	return f
}

// connect serves srv to an in-process client, which it returns.
func connect(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool, requires it to succeed and decodes its structured
// result into a T, after checking it against the tool's output schema.
func call[T any](t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) T {
	t.Helper()
	res := callRaw(t, cs, name, args)
	require.False(t, res.IsError, "%s: %s", name, text(res))
	var out T
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func callRaw(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "%s: a failed call is a tool result, not a protocol error", name)
	if !res.IsError {
		checkOutput(t, cs, name, res.StructuredContent)
	}
	return res
}

// checkOutput validates a tool's structured result against the output
// schema the server lists for it.
func checkOutput(t *testing.T, cs *mcp.ClientSession, name string, content any) {
	t.Helper()
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	i := slices.IndexFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == name })
	require.GreaterOrEqual(t, i, 0, "tool %s is not listed", name)
	b, err := json.Marshal(tools.Tools[i].OutputSchema)
	require.NoError(t, err)
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal(b, &s))
	resolved, err := s.Resolve(nil)
	require.NoError(t, err)
	b, err = json.Marshal(content)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	require.NoError(t, resolved.Validate(v), "%s: %s", name, b)
	assert.False(t, hasNull(v), "%s: tract prints no null: %s", name, b)
}

// hasNull reports whether the decoded JSON value v holds a null.
func hasNull(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range v {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

var (
	readTools  = []string{"branches", "compile", "escalations", "log", "search", "show", "stats", "status"}
	writeTools = []string{"answer_escalation", "branch", "note", "reset"}
)

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		assert.Equal(t, "object", schemaType(t, tl.InputSchema), "%s: input schema", tl.Name)
		assert.Equal(t, "object", schemaType(t, tl.OutputSchema), "%s: output schema", tl.Name)
		assert.NotEmpty(t, tl.Description, tl.Name)
		require.NotNil(t, tl.Annotations, tl.Name)
		assert.Equal(t, slices.Contains(readTools, tl.Name), tl.Annotations.ReadOnlyHint, tl.Name)
	}
	slices.Sort(names)
	return names
}

func schemaType(t *testing.T, s any) string {
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var v struct {
		Type string `json:"type"`
	}
	require.NoError(t, json.Unmarshal(b, &v))
	return v.Type
}

func TestServer_ListsEveryToolWithSchemas(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, mcpserver.New(f.t))
	assert.Equal(t, slices.Sorted(slices.Values(append(slices.Clone(readTools), writeTools...))), toolNames(t, cs))
}

// Every reading tool, called with the arguments an agent would give,
// returns its CLI --json shape, valid against its output schema.
func TestServer_ReadingTools(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, mcpserver.New(f.t))
	type commit struct {
		Hash    string          `json:"hash"`
		Kind    string          `json:"kind"`
		Role    string          `json:"role"`
		Text    string          `json:"text"`
		Refs    []string        `json:"refs"`
		Parents []string        `json:"parents"`
		Meta    json.RawMessage `json:"meta"`
	}
	type logResult struct {
		Commits []commit `json:"commits"`
		Orphans []struct {
			Fork    string   `json:"fork"`
			Action  string   `json:"action"`
			Reason  string   `json:"reason"`
			Commits []commit `json:"commits"`
		} `json:"orphans"`
		Truncated bool `json:"truncated"`
	}
	hashes := func(cs []commit) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Hash)
		}
		return out
	}
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		check func(t *testing.T, raw json.RawMessage)
	}{
		{"log of HEAD", "log", nil, func(t *testing.T, raw json.RawMessage) {
			var l logResult
			require.NoError(t, json.Unmarshal(raw, &l))
			assert.Equal(t, []string{f.accepted.String(), f.user.String()}, hashes(l.Commits)[:2])
			assert.Empty(t, l.Orphans)
			assert.False(t, l.Truncated)
		}},
		{"log with a limit", "log", map[string]any{"limit": 1}, func(t *testing.T, raw json.RawMessage) {
			var l logResult
			require.NoError(t, json.Unmarshal(raw, &l))
			assert.Equal(t, []string{f.accepted.String()}, hashes(l.Commits))
			assert.True(t, l.Truncated)
		}},
		{"log --all shows the purified attempt", "log", map[string]any{"all": true}, func(t *testing.T, raw json.RawMessage) {
			var l logResult
			require.NoError(t, json.Unmarshal(raw, &l))
			i := slices.IndexFunc(l.Orphans, func(o struct {
				Fork    string   `json:"fork"`
				Action  string   `json:"action"`
				Reason  string   `json:"reason"`
				Commits []commit `json:"commits"`
			}) bool {
				return slices.Contains(hashes(o.Commits), f.failed.String())
			})
			require.GreaterOrEqual(t, i, 0, "the failed attempt is among the orphans: %s", raw)
			o := l.Orphans[i]
			assert.Equal(t, f.user.String(), o.Fork)
			assert.Equal(t, "purify", o.Action)
			failed := o.Commits[slices.Index(hashes(o.Commits), f.failed.String())]
			assert.Equal(t, badJSON, failed.Text)
			assert.Contains(t, string(failed.Meta), `"diagnosis"`)
		}},
		{"log --grep", "log", map[string]any{"grep": "COLOURS", "ignore_case": true}, func(t *testing.T, raw json.RawMessage) {
			var l logResult
			require.NoError(t, json.Unmarshal(raw, &l))
			assert.Equal(t, []string{f.user.String()}, hashes(l.Commits))
		}},
		{"show", "show", map[string]any{"rev": f.failed.String()[:8]}, func(t *testing.T, raw json.RawMessage) {
			var c commit
			require.NoError(t, json.Unmarshal(raw, &c))
			assert.Equal(t, f.failed.String(), c.Hash)
			assert.Equal(t, []string{f.user.String()}, c.Parents)
			assert.Contains(t, string(c.Meta), `"failure"`)
		}},
		{"show HEAD", "show", nil, func(t *testing.T, raw json.RawMessage) {
			var c commit
			require.NoError(t, json.Unmarshal(raw, &c))
			assert.Equal(t, f.accepted.String(), c.Hash)
			assert.Equal(t, []string{"HEAD -> main"}, c.Refs)
		}},
		{"compile", "compile", nil, func(t *testing.T, raw json.RawMessage) {
			var c struct {
				Messages []struct{ Role, Content string } `json:"messages"`
			}
			require.NoError(t, json.Unmarshal(raw, &c))
			assert.Equal(t, []struct{ Role, Content string }{
				{"system", "You answer in JSON."}, {"user", "List three colours"}, {"assistant", goodJSON},
			}, c.Messages)
		}},
		{"status", "status", nil, func(t *testing.T, raw json.RawMessage) {
			var st struct {
				Branch string `json:"branch"`
				Head   string `json:"head"`
				Length int    `json:"length"`
			}
			require.NoError(t, json.Unmarshal(raw, &st))
			assert.Equal(t, "main", st.Branch)
			assert.Equal(t, f.accepted.String(), st.Head)
			assert.Equal(t, 3, st.Length)
		}},
		{"status of a branch", "status", map[string]any{"branch": "night"}, func(t *testing.T, raw json.RawMessage) {
			var st struct {
				Branch string `json:"branch"`
			}
			require.NoError(t, json.Unmarshal(raw, &st))
			assert.Equal(t, "night", st.Branch)
		}},
		{"search finds the orphan too", "search", map[string]any{"query": "colors"}, func(t *testing.T, raw json.RawMessage) {
			var s struct {
				Query   string   `json:"query"`
				Commits []commit `json:"commits"`
			}
			require.NoError(t, json.Unmarshal(raw, &s))
			assert.Equal(t, "colors", s.Query)
			assert.Contains(t, hashes(s.Commits), f.failed.String())
			assert.Contains(t, hashes(s.Commits), f.accepted.String())
		}},
		{"stats", "stats", map[string]any{"since": "7d"}, func(t *testing.T, raw json.RawMessage) {
			var s struct {
				TotalTasks  int `json:"total_tasks"`
				Retried     int `json:"retried"`
				Escalations int `json:"escalations"`
			}
			require.NoError(t, json.Unmarshal(raw, &s))
			assert.Equal(t, 2, s.TotalTasks)
			assert.Equal(t, 1, s.Retried)
			assert.Equal(t, 1, s.Escalations)
		}},
		{"branches", "branches", nil, func(t *testing.T, raw json.RawMessage) {
			var b struct {
				Branches []struct {
					Name    string `json:"name"`
					Current bool   `json:"current"`
				} `json:"branches"`
			}
			require.NoError(t, json.Unmarshal(raw, &b))
			require.Len(t, b.Branches, 2)
			assert.Equal(t, "main", b.Branches[0].Name)
			assert.True(t, b.Branches[0].Current)
			assert.Equal(t, "night", b.Branches[1].Name)
		}},
		{"escalations", "escalations", nil, func(t *testing.T, raw json.RawMessage) {
			var e struct {
				Escalations []struct {
					ID       string `json:"id"`
					State    string `json:"state"`
					Task     string `json:"task"`
					Branch   string `json:"branch"`
					Failures []any  `json:"failures"`
				} `json:"escalations"`
			}
			require.NoError(t, json.Unmarshal(raw, &e))
			require.Len(t, e.Escalations, 1)
			assert.Equal(t, f.escalation, e.Escalations[0].ID)
			assert.Equal(t, "pending", e.Escalations[0].State)
			assert.Equal(t, "nightly-1", e.Escalations[0].Task)
			assert.Equal(t, "night", e.Escalations[0].Branch)
			assert.Len(t, e.Escalations[0].Failures, 1)
		}},
		{"one escalation", "escalations", map[string]any{"id": f.escalation}, func(t *testing.T, raw json.RawMessage) {
			assert.Contains(t, string(raw), f.escalation)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callRaw(t, cs, tt.tool, tt.args)
			require.False(t, res.IsError, text(res))
			raw, err := json.Marshal(res.StructuredContent)
			require.NoError(t, err)
			tt.check(t, raw)
			assert.JSONEq(t, string(raw), text(res), "the text content is the same JSON, for clients that read only text")
		})
	}
}

// Bad arguments and failed calls are tool results with isError and a
// message saying what to do, never protocol errors.
func TestServer_ErrorsAreToolResults(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, mcpserver.New(f.t))
	tests := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"show", map[string]any{"rev": "nosuchbranch"}, []string{"nosuchbranch", "log and branches show what there is"}},
		{"log", map[string]any{"limit": 5000}, []string{"limit is 5000: give 1 to 1000"}},
		{"log", map[string]any{"all": true, "rev": "main"}, []string{"rev is not taken with all"}},
		{"log", map[string]any{"grep": "("}, []string{"grep \"(\" is not a regular expression"}},
		{"log", map[string]any{"color": "red"}, []string{"color"}},
		{"search", map[string]any{"query": "  ..."}, []string{"query"}},
		{"search", nil, []string{"query"}},
		{"stats", map[string]any{"since": "yesterday"}, []string{"since \"yesterday\": give an RFC 3339 time"}},
		{"branch", map[string]any{"name": "night"}, []string{"exists", "Choose another name"}},
		{"branch", map[string]any{"name": "x", "from": "HEAD~99"}, []string{"HEAD~99"}},
		{"reset", map[string]any{"rev": "HEAD~1", "branch": "nosuch"}, []string{"nosuch"}},
		{"reset", map[string]any{"rev": "HEAD~1", "expect": "zzzz"}, []string{"expect \"zzzz\" names no commit"}},
		{"note", map[string]any{"text": " "}, []string{"text is empty"}},
		{"answer_escalation", map[string]any{"id": f.escalation, "action": "fix"}, []string{"instruction is empty"}},
		{"answer_escalation", map[string]any{"id": f.escalation, "action": "retry", "instruction": "x"}, []string{"goes with fix only"}},
		{"answer_escalation", map[string]any{"id": f.escalation, "action": "maybe"}, []string{"action", "maybe"}},
		{"answer_escalation", map[string]any{"id": "zzzzzz", "action": "retry"}, []string{"escalations lists the escalations that wait"}},
		{"escalations", map[string]any{"id": "zzzzzz"}, []string{"escalations lists"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+strings.Join(tt.want, " "), func(t *testing.T) {
			res := callRaw(t, cs, tt.tool, tt.args)
			require.True(t, res.IsError, "%s %v succeeded: %s", tt.tool, tt.args, text(res))
			for _, w := range tt.want {
				assert.Contains(t, text(res), w)
			}
		})
	}
}

// branch and note move refs; a reset whose expect another writer made
// stale returns the conflict as a tool error and moves nothing.
func TestServer_WritesAreCompareAndSwap(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cs := connect(t, mcpserver.New(f.t))

	type branch struct {
		Name string `json:"name"`
		Hash string `json:"hash"`
	}
	b := call[branch](t, cs, "branch", map[string]any{"name": "try-2", "from": f.user.String()})
	assert.Equal(t, branch{"try-2", f.user.String()}, b)
	at, err := f.t.Resolve(ctx, "try-2")
	require.NoError(t, err)
	assert.Equal(t, f.user, at)

	type commit struct {
		Hash    string   `json:"hash"`
		Kind    string   `json:"kind"`
		Role    string   `json:"role"`
		Text    string   `json:"text"`
		Parents []string `json:"parents"`
	}
	n := call[commit](t, cs, "note", map[string]any{"text": "trying a shorter prompt", "branch": "try-2", "expect": f.user.String()})
	assert.Equal(t, "note", n.Kind)
	assert.Equal(t, "system", n.Role)
	assert.Equal(t, []string{f.user.String()}, n.Parents)
	at, err = f.t.Resolve(ctx, "try-2")
	require.NoError(t, err)
	assert.Equal(t, n.Hash, at.String(), "the note moved the branch")

	n2 := call[commit](t, cs, "note", map[string]any{"text": "on HEAD's branch"})
	_, head, err := f.t.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, n2.Hash, head.String())
	assert.Equal(t, []string{f.accepted.String()}, n2.Parents)

	// A stale expect: the note above moved main since f.accepted.
	res := callRaw(t, cs, "reset", map[string]any{"rev": f.user.String(), "expect": f.accepted.String()})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "branch main moved from "+f.accepted.Short()+" to "+head.Short())
	assert.Contains(t, text(res), "Nothing was written")
	_, now, err := f.t.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, head, now, "the conflicting reset moved nothing")

	res = callRaw(t, cs, "note", map[string]any{"text": "late", "expect": f.accepted.String()})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "moved from")

	// With the tip it read, the reset goes through, softly.
	type reset struct {
		From     string `json:"from"`
		To       string `json:"to"`
		Orphaned int    `json:"orphaned"`
	}
	r := call[reset](t, cs, "reset", map[string]any{"rev": f.user.String(), "expect": head.String()})
	// The note and the accepted answer leave main; the answer is still on
	// the branch night.
	assert.Equal(t, reset{head.String(), f.user.String(), 1}, r)
	_, err = f.t.Show(ctx, head.String())
	require.NoError(t, err, "a soft reset keeps what it leaves behind")
}

// Of two answers to an escalation one wins; the second is a tool error
// naming the first. The answer records the client's name.
func TestServer_AnswerEscalation(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, mcpserver.New(f.t))
	type answered struct {
		ID     string `json:"id"`
		State  string `json:"state"`
		Answer struct {
			Resolution  string `json:"resolution"`
			Instruction string `json:"instruction"`
			By          string `json:"by"`
		} `json:"answer"`
	}
	a := call[answered](t, cs, "answer_escalation", map[string]any{"id": f.escalation, "action": "fix", "instruction": "use integers"})
	assert.Equal(t, f.escalation, a.ID)
	assert.Equal(t, "answered", a.State)
	assert.Equal(t, "fix", a.Answer.Resolution)
	assert.Equal(t, "use integers", a.Answer.Instruction)
	assert.Equal(t, "mcp:test-agent", a.Answer.By)

	res := callRaw(t, cs, "answer_escalation", map[string]any{"id": f.escalation, "action": "skip", "by": "bob"})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), `answered already: "fix: use integers" by mcp:test-agent`)
	assert.Contains(t, text(res), "One answer wins")
}

// Read-only: the writing tools are not listed, and a call to one fails.
func TestServer_ReadOnly(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, mcpserver.New(f.t, mcpserver.ReadOnly()))
	assert.Equal(t, readTools, toolNames(t, cs))
	for _, name := range writeTools {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"name": "x", "rev": "HEAD", "text": "x"}})
		require.Error(t, err, "%s must not run", name)
		assert.Contains(t, err.Error(), name)
	}
	ctx := context.Background()
	bs, err := f.t.Branches(ctx)
	require.NoError(t, err)
	assert.Len(t, bs, 2, "nothing was created")
}

// A repository with no commits yet reads as empty, and show says there
// is nothing to show.
func TestServer_EmptyRepository(t *testing.T) {
	tr, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"))
	require.NoError(t, err)
	defer tr.Close()
	cs := connect(t, mcpserver.New(tr))
	for _, tool := range []string{"log", "status", "compile", "branches", "escalations", "stats", "search"} {
		args := map[string]any{}
		if tool == "search" {
			args["query"] = "anything"
		}
		res := callRaw(t, cs, tool, args)
		assert.False(t, res.IsError, "%s: %s", tool, text(res))
	}
	res := callRaw(t, cs, "show", nil)
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "no commits yet")
}

func TestServer_Resources(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, mcpserver.New(f.t))
	ctx := context.Background()
	rs, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	require.Len(t, rs.Resources, 1)
	assert.Equal(t, mcpserver.BranchesURI, rs.Resources[0].URI)
	ts, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	var templates []string
	for _, rt := range ts.ResourceTemplates {
		templates = append(templates, rt.URITemplate)
	}
	assert.ElementsMatch(t, []string{mcpserver.CommitURITemplate, mcpserver.BranchURITemplate}, templates)

	read := func(uri string) (string, error) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		require.Len(t, res.Contents, 1)
		assert.Equal(t, "application/json", res.Contents[0].MIMEType)
		return res.Contents[0].Text, nil
	}
	got, err := read(mcpserver.BranchesURI)
	require.NoError(t, err)
	var bs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(got), &bs))
	assert.Len(t, bs, 2)

	for _, rev := range []string{f.failed.String(), f.failed.String()[:10], "main", "HEAD~1", "HEAD%5E"} {
		got, err := read("tract://commit/" + rev)
		require.NoError(t, err, rev)
		var c struct {
			Hash string `json:"hash"`
		}
		require.NoError(t, json.Unmarshal([]byte(got), &c))
		assert.NotEmpty(t, c.Hash, rev)
	}
	_, err = f.t.CreateBranch(ctx, "feature/x", f.user.String())
	require.NoError(t, err)
	for name, tip := range map[string]tract.Hash{"main": f.accepted, "feature/x": f.user} {
		got, err := read("tract://branch/" + name)
		require.NoError(t, err, name)
		var l struct {
			Commits []struct {
				Hash string `json:"hash"`
			} `json:"commits"`
			Orphans []any `json:"orphans"`
		}
		require.NoError(t, json.Unmarshal([]byte(got), &l))
		require.NotEmpty(t, l.Commits, name)
		assert.Equal(t, tip.String(), l.Commits[0].Hash, name)
		assert.NotNil(t, l.Orphans)
	}
	_, err = read("tract://branch/nosuch")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not found")

	_, err = read("tract://commit/" + strings.Repeat("ab", 32))
	require.Error(t, err)
	var rpc interface{ Error() string }
	require.True(t, errors.As(err, &rpc))
	assert.Contains(t, err.Error(), "not found")
}

// No call holds a transaction after it answers: another writer gets the
// lock at once.
func TestServer_HoldsNoLockBetweenCalls(t *testing.T) {
	f := newFixture(t, tract.WithLockTimeout(time.Second))
	cs := connect(t, mcpserver.New(f.t))
	call[map[string]any](t, cs, "log", map[string]any{"all": true})
	call[map[string]any](t, cs, "search", map[string]any{"query": "colors"})
	other, err := tract.Open(f.t.Path(), tract.WithLockTimeout(100*time.Millisecond))
	require.NoError(t, err)
	defer other.Close()
	_, err = other.Note(context.Background(), "written while the server is connected")
	require.NoError(t, err)
	got := call[struct {
		Commits []struct{ Text string } `json:"commits"`
	}](t, cs, "log", map[string]any{"limit": 1})
	assert.Equal(t, "written while the server is connected", got.Commits[0].Text, "the server reads what others wrote")
}
