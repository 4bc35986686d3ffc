package tract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres/pgtest"
	"github.com/tractdag/tract/tool"
)

// randomModel answers a validated turn at random: valid JSON, an answer
// the json validator rejects (a retry: steering, then purify), or a tool
// call when the turn has tools.
type randomModel struct{ rng *rand.Rand }

func (m randomModel) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	switch r := m.rng.IntN(10); {
	case r < 3 && len(req.Tools) > 0:
		return &llm.Response{Model: chatModel, ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", m.rng.IntN(1000)), Type: "function",
			Function: llm.FunctionCall{Name: "lookup", Arguments: `{"city":"Oslo"}`}}}}, nil
	case r < 5:
		return &llm.Response{Model: chatModel, Content: "not JSON " + randomText(m.rng)}, nil
	}
	b, _ := json.Marshal(map[string]string{"answer": randomText(m.rng)})
	return &llm.Response{Model: chatModel, Content: string(b)}, nil
}

// randomText is a short text, sometimes long, sometimes not ASCII.
func randomText(rng *rand.Rand) string {
	words := []string{"alpha", "beta", "gamma", "Ωmega", "naïve", "日本語", "tab\there", "line\nbreak", `"quoted"`}
	n := 1 + rng.IntN(6)
	if rng.IntN(20) == 0 {
		n = 20000 // records are cut at about 256 KiB: long texts reach it
	}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// The compiled-context records validated turns write give, in a fresh
// process (a new handle), byte for byte what compiling the commits gives
// (CompileSeq reads every commit and never a record), at the tip and at
// ancestors, over random histories: plain commits of every kind, shaped
// imports (tool calls and their results), validated turns with retries,
// purify, system prompts and tool steps, soft resets (edits: the branch
// goes back and grows again), compressions into summaries, branches and
// gc.
// It runs on a file and, with TRACT_TEST_POSTGRES_URL, on PostgreSQL.
func TestCompile_RecordsMatchTheCommits(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("file/", seed), func(t *testing.T) {
			testRecordsMatch(t, seed, filepath.Join(t.TempDir(), "tract.db"))
		})
	}
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("postgres/", seed), func(t *testing.T) {
			testRecordsMatch(t, seed, pgtest.RepositoryURL(t, pgtest.URL(t)))
		})
	}
}

func testRecordsMatch(t *testing.T, seed uint64, path string) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 35))
	tr, err := tract.Init(path, tract.WithNoSync(), tract.WithClient(randomModel{rng}), tract.WithContextRecords(0))
	require.NoError(t, err)
	defer tr.Close()
	runs := 0
	lookup := lookupTool(&runs)

	sawRecords := false
	check := func(step int) {
		t.Helper()
		fresh, err := tract.Open(path, tract.WithNoSync())
		require.NoError(t, err)
		defer fresh.Close()
		log, err := fresh.Log(ctx)
		require.NoError(t, err)
		revs := []string{""}
		for range 3 {
			if len(log) > 0 {
				revs = append(revs, log[rng.IntN(len(log))].Hash.String())
			}
		}
		for _, rev := range revs {
			var opts []tract.CompileOption
			if rev != "" {
				opts = append(opts, tract.CompileAt(rev))
			}
			fresh.DropCaches()
			got, err := fresh.Compile(ctx, opts...)
			require.NoError(t, err)
			var want []tract.Message
			for m, err := range fresh.CompileSeq(ctx, opts...) {
				require.NoError(t, err)
				want = append(want, m)
			}
			gotJSON, err := json.Marshal(got)
			require.NoError(t, err)
			wantJSON, err := json.Marshal(want)
			require.NoError(t, err)
			require.Equal(t, string(wantJSON), string(gotJSON), "step %d, at %q", step, rev)
		}
		if len(log) > 0 {
			require.NoError(t, fresh.Store().View(ctx, func(tx store.Tx) error {
				rec, err := tx.(store.ContextTx).Context(log[0].Hash)
				sawRecords = sawRecords || rec != nil
				return err
			}))
		}
	}

	branches := []string{"main"}
	for step := range 120 {
		switch op := rng.IntN(20); {
		case op < 4:
			kinds := []tract.Kind{tract.KindMessage, tract.KindMessage, tract.KindNote, tract.KindSummary, tract.KindSteering}
			roles := []tract.Role{tract.RoleUser, tract.RoleAssistant, tract.RoleSystem}
			_, err = tr.Commit(ctx, kinds[rng.IntN(len(kinds))], roles[rng.IntN(len(roles))], randomText(rng))
		case op < 6:
			id := fmt.Sprintf("imp_%d", step)
			_, err = tr.CommitMany(ctx, []tract.ImportMessage{
				{Role: tract.RoleUser, Content: randomText(rng)},
				{Role: tract.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Type: "function", Function: llm.FunctionCall{Name: "lookup", Arguments: `{"city":"Rome"}`}}}},
				{Role: tract.RoleTool, ToolCallID: id, Content: `{"sky":"clear"}`},
			})
		case op < 13:
			opts := []tract.ChatOption{tract.Validate(retry.JSON()), tract.MaxAttempts(3)}
			if rng.IntN(3) == 0 {
				opts = append(opts, tract.SystemPrompt("be brief "+fmt.Sprint(rng.IntN(3))))
			}
			if rng.IntN(3) == 0 {
				opts = append(opts, tract.Tools([]tool.Tool{lookup}...), tract.MaxToolSteps(2))
			}
			_, err = tr.Chat(ctx, randomText(rng), opts...)
			err = nil // an exhausted or stopped turn is recorded as well
		case op < 15:
			log, lerr := tr.Log(ctx)
			require.NoError(t, lerr)
			if len(log) > 1 {
				_, err = tr.Reset(ctx, log[rng.IntN(len(log))].Hash.String(), tract.Soft)
			}
		case op < 16:
			log, lerr := tr.Log(ctx)
			require.NoError(t, lerr)
			if len(log) > 6 {
				to := 1 + rng.IntN(len(log)-4)
				from := to + 1 + rng.IntN(min(4, len(log)-to-1))
				_, err = tr.CompressRange(ctx, log[from].Hash.String(), log[to].Hash.String(), tract.Summaries("summary "+randomText(rng)))
				if err != nil {
					err = nil // a range compress refuses (pinned, too small) is no failure here
				}
			}
		case op < 18:
			name := fmt.Sprintf("b%d", step)
			if _, err = tr.CreateBranch(ctx, name, "HEAD"); err == nil {
				branches = append(branches, name)
				_, err = tr.Checkout(ctx, branches[rng.IntN(len(branches))])
			}
		case op < 19:
			_, err = tr.Checkout(ctx, branches[rng.IntN(len(branches))])
		default:
			_, err = tr.GC(ctx)
		}
		require.NoError(t, err, "step %d", step)
		if step%7 == 6 {
			check(step)
		}
	}
	check(120)
	require.True(t, sawRecords, "no tip had a record: the test compared nothing")
	report, err := tr.Fsck(ctx)
	require.NoError(t, err)
	require.True(t, report.OK(), "%v", report.Problems)
}

// A hard reset erases a text from the compiled-context records too: turns
// whose records hold a secret (merged, and replaced by longer records, as
// turns go on) leave no copy of it in the file once the turns are reset
// away.
func TestReset_HardErasesTextsFromRecords(t *testing.T) {
	ctx := context.Background()
	const secret = "sk-secret-in-a-record-4242"
	model := llm.NewScripted().When(secret, llm.Reply{Content: `{"ok":"` + secret + `"}`}).Otherwise(llm.Reply{Content: `{"ok":true}`})
	// Texts (and records) are kept uncompressed, so that the search of
	// the raw file below finds the secret while it is stored.
	tr := newTract(t, tract.WithClient(model), tract.WithContextRecords(0), tract.WithUncompressedTexts())
	_, err := tr.Import(ctx, chain(500, 200, "m"))
	require.NoError(t, err)
	_, err = tr.Chat(ctx, "a first turn", tract.Validate(retry.JSON()))
	require.NoError(t, err)
	_, base, err := tr.Head(ctx)
	require.NoError(t, err)
	_, err = tr.Chat(ctx, "remember "+secret, tract.Validate(retry.JSON()))
	require.NoError(t, err)
	for i := range 20 {
		_, err = tr.Chat(ctx, fmt.Sprintf("turn %d", i), tract.Validate(retry.JSON()))
		require.NoError(t, err)
	}
	require.NoError(t, tr.Store().View(ctx, func(tx store.Tx) error {
		_, tip, err := tr.Head(ctx)
		require.NoError(t, err)
		rec, err := tx.(store.ContextTx).Context(tip)
		require.NotNil(t, rec, "the last turn wrote a record")
		return err
	}))
	path := tr.Path()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), secret, "precondition: the secret is in the file")

	_, err = tr.Reset(ctx, base.String(), tract.Hard)
	require.NoError(t, err)
	got, err := tr.Compile(ctx)
	require.NoError(t, err)
	require.Len(t, got, 502, "the context before the secret")
	require.NoError(t, tr.Close())
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(data), secret)
}

// A short conversation keeps no records by default (its context compiles
// from its commits in a few milliseconds, and records would store its
// texts twice); past DefaultContextRecords bytes a turn writes them.
func TestChat_ContextRecordsOnlyForLongContexts(t *testing.T) {
	ctx := context.Background()
	hasRecord := func(tr *tract.Tract) bool {
		var rec []byte
		_, tip, err := tr.Head(ctx)
		require.NoError(t, err)
		require.NoError(t, tr.Store().View(ctx, func(tx store.Tx) error {
			rec, err = tx.(store.ContextTx).Context(tip)
			return err
		}))
		return rec != nil
	}
	for _, tc := range []struct {
		name     string
		messages int
		opts     []tract.Option
		want     bool
	}{
		{"short", 100, nil, false},
		{"long", 2 * tract.DefaultContextRecords / 200, nil, true},
		{"short, every branch", 100, []tract.Option{tract.WithContextRecords(0)}, true},
		{"long, none", 2 * tract.DefaultContextRecords / 200, []tract.Option{tract.WithContextRecords(-1)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTract(t, append([]tract.Option{tract.WithClient(llm.NewScripted().Otherwise(llm.Reply{Content: `{"ok":true}`}))}, tc.opts...)...)
			_, err := tr.Import(ctx, chain(tc.messages, 200, "m"))
			require.NoError(t, err)
			_, err = tr.Chat(ctx, "one more", tract.Validate(retry.JSON()))
			require.NoError(t, err)
			assert.Equal(t, tc.want, hasRecord(tr))
		})
	}
}
