package tract_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/export"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// exportRepo is the repository the export tests read:
//
//	main:    system, turn A (json, task t-1: rejected twice, then accepted),
//	         turn B (plain, no validators), turn C (json, task t-2: both of
//	         its 2 attempts rejected: exhausted, an error commit)
//	feature: forks after B; turn D (contains:yes, task t-3: rejected once)
//	raw:     forks after B; turn E (contains:yes, no purify: the rejected
//	         answer and the steering stay on the branch)
type exportRepo struct {
	tr *tract.Tract
	// cStart is the time of turn C's user message: turns C, D and E
	// started at or after it, A and B before.
	cStart time.Time
}

const (
	exportSystem = "You are terse."
	exportA      = `{"ok":true}`
)

func newExportRepo(t *testing.T) *exportRepo {
	t.Helper()
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	_, err := tr.System(ctx, exportSystem)
	require.NoError(t, err)

	srv.Reply(llmtest.Answer("not json"), llmtest.Answer("{bad"), llmtest.Answer(exportA))
	_, err = tr.Chat(ctx, "Give JSON.", tract.Validate(retry.JSON()), tract.Task("t-1"))
	require.NoError(t, err)

	srv.Reply(llmtest.Answer("Hi."))
	_, err = tr.Chat(ctx, "Hello")
	require.NoError(t, err)
	_, err = tr.CreateBranch(ctx, "feature", "")
	require.NoError(t, err)
	_, err = tr.CreateBranch(ctx, "raw", "")
	require.NoError(t, err)

	srv.Reply(llmtest.Answer("nope"), llmtest.Answer("still nope"))
	_, err = tr.Chat(ctx, "More JSON.", tract.Validate(retry.JSON()), tract.Task("t-2"), tract.MaxAttempts(2))
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	require.Equal(t, "More JSON.", log[1].Text)
	cStart := log[1].Time

	srv.Reply(llmtest.Answer("no"), llmtest.Answer("yes"))
	_, err = tr.OnBranch("feature").Chat(ctx, "Say yes.", tract.Validate(mustSpec(t, "contains:yes")), tract.Task("t-3"))
	require.NoError(t, err)

	srv.Reply(llmtest.Answer("no"), llmtest.Answer("yes, raw"))
	_, err = tr.OnBranch("raw").Chat(ctx, "Raw yes.", tract.Validate(mustSpec(t, "contains:yes")), tract.Purify(false))
	require.NoError(t, err)
	return &exportRepo{tr: tr, cStart: cStart}
}

// exportLines runs Export and returns its lines, decoded.
func exportLines(t *testing.T, tr *tract.Tract, f export.Format, opts ...tract.ExportOption) ([]map[string]any, tract.ExportResult) {
	t.Helper()
	var b bytes.Buffer
	res, err := tr.Export(context.Background(), &b, f, opts...)
	require.NoError(t, err)
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &v), "line %q", line)
		out = append(out, v)
	}
	require.Equal(t, len(out), res.Lines)
	return out, res
}

// msg is a message as its JSON decodes.
func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func msgs(ms ...map[string]any) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

var (
	exportPromptA = msgs(msg("system", exportSystem), msg("user", "Give JSON."))
	exportUpToB   = msgs(msg("system", exportSystem), msg("user", "Give JSON."), msg("assistant", exportA),
		msg("user", "Hello"), msg("assistant", "Hi."))
	exportPromptC = append(exportUpToB[:5:5], msg("user", "More JSON."))
	exportPromptD = append(exportUpToB[:5:5], msg("user", "Say yes."))
	exportPromptE = append(exportUpToB[:5:5], msg("user", "Raw yes."))
)

func TestExport_OpenAI(t *testing.T) {
	r := newExportRepo(t)
	withWeight := func(m map[string]any, w float64) map[string]any {
		c := map[string]any{"weight": w}
		for k, v := range m {
			c[k] = v
		}
		return c
	}
	tests := []struct {
		name string
		opts []tract.ExportOption
		want [][]any // each line's "messages"
	}{
		{"HEAD: the exhausted turn's error is left out", nil, [][]any{exportPromptC}},
		{"a revision", []tract.ExportOption{tract.ExportRev("feature")}, [][]any{append(exportPromptD, msg("assistant", "yes"))}},
		{"rejected answer and steering left out", []tract.ExportOption{tract.ExportRev("raw")},
			[][]any{append(exportPromptE, msg("assistant", "yes, raw"))}},
		{"all: one line per branch, by name", []tract.ExportOption{tract.ExportAll()}, [][]any{
			append(exportPromptD, msg("assistant", "yes")), exportPromptC, append(exportPromptE, msg("assistant", "yes, raw"))}},
		{"branches, in the order given", []tract.ExportOption{tract.ExportBranches("raw", "main")}, [][]any{
			append(exportPromptE, msg("assistant", "yes, raw")), exportPromptC}},
		{"task", []tract.ExportOption{tract.ExportAll(), tract.ExportTask("t-3")}, [][]any{append(exportPromptD, msg("assistant", "yes"))}},
		{"validator kind", []tract.ExportOption{tract.ExportAll(), tract.ExportValidator("contains")}, [][]any{
			append(exportPromptD, msg("assistant", "yes")), append(exportPromptE, msg("assistant", "yes, raw"))}},
		{"min attempts", []tract.ExportOption{tract.ExportAll(), tract.ExportMinAttempts(3)}, [][]any{
			append(exportPromptD, msg("assistant", "yes")), exportPromptC, append(exportPromptE, msg("assistant", "yes, raw"))}},
		{"until: no conversation ended before turn C", []tract.ExportOption{tract.ExportAll(), tract.ExportUntil(r.cStart)}, nil},
		{"weights: assistant-last", []tract.ExportOption{tract.ExportRev("feature"), tract.ExportWeights(export.WeightsAssistantLast)}, [][]any{
			msgs(msg("system", exportSystem), msg("user", "Give JSON."), withWeight(msg("assistant", exportA), 0),
				msg("user", "Hello"), withWeight(msg("assistant", "Hi."), 0), msg("user", "Say yes."), withWeight(msg("assistant", "yes"), 1))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, res := exportLines(t, r.tr, export.OpenAI, tt.opts...)
			require.Len(t, lines, len(tt.want))
			assert.Equal(t, len(tt.want), res.Items)
			for i, l := range lines {
				assert.Len(t, l, 1, "a line holds messages only")
				assert.Equal(t, tt.want[i], l["messages"], "line %d", i+1)
			}
		})
	}
}

func TestExport_Preference(t *testing.T) {
	r := newExportRepo(t)
	assistant := func(s string) []any { return msgs(msg("assistant", s)) }
	type pair struct {
		prompt           []any
		chosen, rejected string
	}
	pairsA := []pair{{exportPromptA, exportA, "not json"}, {exportPromptA, exportA, "{bad"}}
	pairD := pair{exportPromptD, "yes", "no"}
	pairE := pair{exportPromptE, "yes, raw", "no"}
	tests := []struct {
		name string
		opts []tract.ExportOption
		want []pair
	}{
		{"HEAD: the exhausted turn gives no pair", nil, pairsA},
		{"all, orphaned attempts included", []tract.ExportOption{tract.ExportAll()}, append(pairsA[:2:2], pairD, pairE)},
		{"a revision", []tract.ExportOption{tract.ExportRev("feature")}, append(pairsA[:2:2], pairD)},
		{"branches", []tract.ExportOption{tract.ExportBranches("raw")}, append(pairsA[:2:2], pairE)},
		{"task", []tract.ExportOption{tract.ExportAll(), tract.ExportTask("t-3")}, []pair{pairD}},
		{"validator spec", []tract.ExportOption{tract.ExportAll(), tract.ExportValidator("contains:yes")}, []pair{pairD, pairE}},
		{"validator kind", []tract.ExportOption{tract.ExportAll(), tract.ExportValidator("json")}, pairsA},
		{"min attempts", []tract.ExportOption{tract.ExportAll(), tract.ExportMinAttempts(3)}, pairsA},
		{"since", []tract.ExportOption{tract.ExportAll(), tract.ExportSince(r.cStart)}, []pair{pairD, pairE}},
		{"until", []tract.ExportOption{tract.ExportAll(), tract.ExportUntil(r.cStart)}, pairsA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			openai, _ := exportLines(t, r.tr, export.OpenAIPreference, tt.opts...)
			trl, _ := exportLines(t, r.tr, export.TRLPreference, tt.opts...)
			require.Len(t, openai, len(tt.want))
			require.Len(t, trl, len(tt.want))
			for i, p := range tt.want {
				assert.Equal(t, map[string]any{
					"input":                map[string]any{"messages": p.prompt},
					"preferred_output":     assistant(p.chosen),
					"non_preferred_output": assistant(p.rejected),
				}, openai[i], "openai-preference line %d", i+1)
				assert.Equal(t, map[string]any{
					"prompt": p.prompt, "chosen": assistant(p.chosen), "rejected": assistant(p.rejected),
				}, trl[i], "trl-preference line %d", i+1)
			}
		})
	}
}

func TestExport_KTO(t *testing.T) {
	r := newExportRepo(t)
	type example struct {
		prompt     []any
		completion string
		label      bool
	}
	a := []example{{exportPromptA, exportA, true}, {exportPromptA, "not json", false}, {exportPromptA, "{bad", false}}
	c := []example{{exportPromptC, "nope", false}, {exportPromptC, "still nope", false}}
	d := []example{{exportPromptD, "yes", true}, {exportPromptD, "no", false}}
	e := []example{{exportPromptE, "yes, raw", true}, {exportPromptE, "no", false}}
	cat := func(xs ...[]example) []example {
		var out []example
		for _, x := range xs {
			out = append(out, x...)
		}
		return out
	}
	tests := []struct {
		name      string
		opts      []tract.ExportOption
		want      []example
		wantTurns int
	}{
		{"HEAD: the exhausted turn's answers are rejected", nil, cat(a, c), 2},
		{"all", []tract.ExportOption{tract.ExportAll()}, cat(a, c, d, e), 4},
		{"task of the exhausted turn", []tract.ExportOption{tract.ExportAll(), tract.ExportTask("t-2")}, c, 1},
		{"min attempts 2", []tract.ExportOption{tract.ExportAll(), tract.ExportMinAttempts(2), tract.ExportValidator("json")}, cat(a, c), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, res := exportLines(t, r.tr, export.TRLKTO, tt.opts...)
			assert.Equal(t, tt.wantTurns, res.Items)
			require.Len(t, lines, len(tt.want))
			for i, x := range tt.want {
				assert.Equal(t, map[string]any{
					"prompt": x.prompt, "completion": msgs(msg("assistant", x.completion)), "label": x.label,
				}, lines[i], "line %d", i+1)
			}
		})
	}
}

// The validators of a turn are recorded on its answers, so that an export
// can select by them.
func TestChat_RecordsValidators(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no"), llmtest.Answer(`"yes"`))
	_, err := tr.Chat(context.Background(), "Say yes.", tract.Validate(mustSpec(t, "contains:yes"), retry.JSON()))
	require.NoError(t, err)
	want := []string{"contains:yes", "json"}
	log := chatLog(t, tr)
	assert.Equal(t, want, log[0].Validators(), "the accepted answer")
	assert.Equal(t, want, failedAttempt(t, tr, 1).Validators(), "the rejected one")
	assert.Nil(t, log[1].Validators(), "the user message")
}

// An export in the openai format imports back, one branch per
// conversation, and exports again to the same bytes (weights included).
func TestExport_RefusesAnUnknownFormat(t *testing.T) {
	tr := newTract(t)
	ctx := context.Background()
	_, err := tr.User(ctx, "hi")
	require.NoError(t, err)
	for _, f := range []export.Format{"", "nope", "OpenAI"} {
		var buf bytes.Buffer
		_, err := tr.Export(ctx, &buf, f)
		require.ErrorIs(t, err, export.ErrUnknownFormat, "%q", f)
		assert.Contains(t, err.Error(), "formats: openai, openai-preference", "%q", f)
		assert.Empty(t, buf.String())
	}
}

func TestExport_RoundTrip(t *testing.T) {
	r := newExportRepo(t)
	ctx := context.Background()
	for _, w := range []export.Weights{export.WeightsRecorded, export.WeightsAssistantLast} {
		t.Run(string(w), func(t *testing.T) {
			var first bytes.Buffer
			_, err := r.tr.Export(ctx, &first, export.OpenAI, tract.ExportAll(), tract.ExportWeights(w))
			require.NoError(t, err)

			other := newChatTract(t, nil)
			bs, err := other.ImportConversations(ctx, "conv", tract.ReadConversations(bytes.NewReader(first.Bytes())))
			require.NoError(t, err)
			require.Len(t, bs, 3)
			assert.Equal(t, []string{"conv-1", "conv-2", "conv-3"}, []string{bs[0].Name, bs[1].Name, bs[2].Name})

			var again bytes.Buffer
			_, err = other.Export(ctx, &again, export.OpenAI, tract.ExportAll())
			require.NoError(t, err)
			assert.Equal(t, first.String(), again.String())

			var one bytes.Buffer
			_, err = other.Export(ctx, &one, export.OpenAI, tract.ExportRev("conv-2"))
			require.NoError(t, err)
			assert.Equal(t, strings.SplitAfter(first.String(), "\n")[1], one.String())
		})
	}
}

func TestImportConversations_Numbering(t *testing.T) {
	ctx := context.Background()
	var in strings.Builder
	for range 12 {
		in.WriteString(`{"messages":[{"role":"user","content":"hi"}]}` + "\n")
	}
	tr := newChatTract(t, nil)
	bs, err := tr.ImportConversations(ctx, "c", tract.ReadConversations(strings.NewReader(in.String())))
	require.NoError(t, err)
	require.Len(t, bs, 12)
	assert.Equal(t, "c-01", bs[0].Name)
	assert.Equal(t, "c-12", bs[11].Name)

	_, err = tr.ImportConversations(ctx, "c", tract.ReadConversations(strings.NewReader(in.String())))
	assert.ErrorIs(t, err, tract.ErrBranchExists)
	branches, err := tr.Branches(ctx)
	require.NoError(t, err)
	assert.Len(t, branches, 12, "a refused import writes nothing")
}

// ExportAll leaves out a branch whose conversation another one contains,
// and repeats none.
func TestExport_AllLeavesOutContainedBranches(t *testing.T) {
	ctx := context.Background()
	tr := newChatTract(t, nil)
	var b bytes.Buffer
	res, err := tr.Export(ctx, &b, export.OpenAI, tract.ExportAll())
	require.NoError(t, err)
	assert.Zero(t, res.Lines, "an empty repository")
	res, err = tr.Export(ctx, &b, export.OpenAI)
	require.NoError(t, err)
	assert.Zero(t, res.Lines, "an unborn branch")
	assert.Empty(t, b.String())

	_, err = tr.CommitMany(ctx, []tract.ImportMessage{{Role: tract.RoleUser, Content: "q"}, {Role: tract.RoleAssistant, Content: "a"}})
	require.NoError(t, err)
	for _, br := range []struct{ name, rev string }{{"a-prefix", "HEAD~1"}, {"b-same", "HEAD"}, {"z-same", "HEAD"}} {
		_, err := tr.CreateBranch(ctx, br.name, br.rev)
		require.NoError(t, err)
	}
	lines, _ := exportLines(t, tr, export.OpenAI, tract.ExportAll())
	assert.Equal(t, []map[string]any{{"messages": msgs(msg("user", "q"), msg("assistant", "a"))}}, lines)
	lines, _ = exportLines(t, tr, export.OpenAI, tract.ExportBranches("a-prefix", "z-same"))
	assert.Len(t, lines, 2, "branches named are exported as named")
}

// A turn retried in a fresh context pairs its answers on the context it
// started from; OnExport reports each turn written.
func TestExport_FreshContextAndProgress(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("not json"), llmtest.Answer("{bad"), llmtest.Answer(exportA))
	_, err := tr.Chat(ctx, "Give JSON.", tract.Validate(retry.JSON()), tract.RetryContextStrategy(tract.ContextFresh))
	require.NoError(t, err)

	var progress []tract.ExportProgress
	lines, res := exportLines(t, tr, export.TRLPreference, tract.ExportAll(), tract.OnExport(func(p tract.ExportProgress) { progress = append(progress, p) }))
	require.Len(t, lines, 2)
	for i, rejected := range []string{"not json", "{bad"} {
		assert.Equal(t, map[string]any{"prompt": msgs(msg("user", "Give JSON.")), "chosen": msgs(msg("assistant", exportA)),
			"rejected": msgs(msg("assistant", rejected))}, lines[i])
	}
	assert.Equal(t, []tract.ExportProgress{{Items: 1, Lines: 2}}, progress)
	assert.Equal(t, tract.ExportResult{Items: 1, Lines: 2}, res)
}
