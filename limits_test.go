package tract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/testinput"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

func TestLimits_DefaultsAndOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []tract.Option
		want tract.Limits
	}{
		{"defaults", nil, tract.Limits{MessageSize: 16 << 20, MetaSize: 1 << 20, LineSize: 65 << 20, InputSize: 4 << 30}},
		{"the line follows the message and metadata", []tract.Option{tract.WithLimits(tract.Limits{MessageSize: 1 << 20, MetaSize: 1000})},
			tract.Limits{MessageSize: 1 << 20, MetaSize: 1000, LineSize: 4<<20 + 1000, InputSize: 4 << 30}},
		{"later options add to earlier ones", []tract.Option{tract.WithLimits(tract.Limits{MessageSize: 10, InputSize: 99}), tract.WithLimits(tract.Limits{LineSize: 7, MessageSize: 20})},
			tract.Limits{MessageSize: 20, MetaSize: 1 << 20, LineSize: 7, InputSize: 99}},
		{"zero and negative keep the defaults", []tract.Option{tract.WithLimits(tract.Limits{MessageSize: -1, MetaSize: 0})},
			tract.Limits{MessageSize: 16 << 20, MetaSize: 1 << 20, LineSize: 65 << 20, InputSize: 4 << 30}},
		{"a huge message size makes the line limitless", []tract.Option{tract.WithLimits(tract.Limits{MessageSize: 1 << 62})},
			tract.Limits{MessageSize: 1 << 62, MetaSize: 1 << 20, LineSize: 1<<63 - 1, InputSize: 4 << 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTract(t, tc.opts...)
			assert.Equal(t, tc.want, tr.Limits())
			assert.Equal(t, tc.want, tr.OnBranch("main").Limits(), "a view shares its handle's limits")
		})
	}
}

// Text over the message size limit, and metadata over the metadata size
// limit, are refused whichever way they come in, before anything is
// written; text and metadata at the limits are taken.
func TestLimits_CommitCommitManyAndImport(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t, tract.WithLimits(tract.Limits{MessageSize: 100, MetaSize: 40}))
	_, err := tr.User(ctx, "first")
	require.NoError(t, err)
	atText := strings.Repeat("é", 50)                   // 100 bytes
	overText := strings.Repeat("x", 101)                // 101 bytes
	atMeta := `{"k":"` + strings.Repeat("m", 32) + `"}` // 40 bytes
	overMeta := `{"k":"` + strings.Repeat("m", 33) + `"}`
	bigMap := map[string]any{"k": strings.Repeat("m", 40)}

	ok := []func() error{
		func() error { _, err := tr.User(ctx, atText, tract.WithMetaJSON([]byte(atMeta))); return err },
		func() error {
			_, err := tr.CommitMany(ctx, []tract.ImportMessage{{Role: tract.RoleUser, Content: atText, Meta: json.RawMessage(atMeta)}})
			return err
		},
	}
	for i, f := range ok {
		require.NoError(t, f(), "case %d", i)
	}
	before := commitCount(t, tr)
	for _, tc := range []struct {
		name  string
		do    func() error
		which tract.SizeLimit
		err   string
	}{
		{"commit text", func() error { _, err := tr.User(ctx, overText); return err }, tract.LimitMessageSize,
			"commit: the text is 101 B, over the message size limit (100 B)"},
		{"commit metadata as JSON", func() error { _, err := tr.User(ctx, "x", tract.WithMetaJSON([]byte(overMeta))); return err }, tract.LimitMetaSize,
			"commit: the metadata is 41 B, over the metadata size limit (40 B)"},
		{"commit metadata as JSON with white space", func() error {
			_, err := tr.User(ctx, "x", tract.WithMetaJSON([]byte(`{"k": 1,`+strings.Repeat(" ", 40)+`"j": 2}`)))
			return err
		}, tract.LimitMetaSize, "the metadata is 55 B"},
		{"commit metadata as a map", func() error { _, err := tr.User(ctx, "x", tract.WithMeta(bigMap)); return err }, tract.LimitMetaSize,
			"the metadata is 48 B"},
		{"CommitMany text", func() error {
			_, err := tr.CommitMany(ctx, []tract.ImportMessage{{Role: tract.RoleUser, Content: "a"}, {Role: tract.RoleUser, Content: overText}})
			return err
		}, tract.LimitMessageSize, "commit: message 2: the text is 101 B"},
		{"CommitMany metadata", func() error {
			_, err := tr.CommitMany(ctx, []tract.ImportMessage{{Role: tract.RoleUser, Content: "a", Meta: json.RawMessage(overMeta)}})
			return err
		}, tract.LimitMetaSize, "commit: message 1: the metadata is 41 B"},
		{"Import text", func() error {
			_, err := tr.Import(ctx, []tract.ImportMessage{{Role: tract.RoleUser, Content: "a"}, {Role: tract.RoleUser, Content: "b"}, {Role: tract.RoleAssistant, Content: overText}})
			return err
		}, tract.LimitMessageSize, "import: message 3: the text is 101 B"},
		{"ImportSeq text after a batch", func() error {
			msgs := append(chain(250, 10, "m"), tract.ImportMessage{Role: tract.RoleUser, Content: overText})
			_, err := tr.ImportSeq(ctx, seqOf(msgs, 0, nil), small)
			return err
		}, tract.LimitMessageSize, "import: message 251: the text is 101 B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			tl := testinput.RequireTooLarge(t, err, tc.which)
			assert.False(t, tl.More)
			assert.ErrorContains(t, err, tc.err)
			assert.Equal(t, before, commitCount(t, tr), "nothing was written")
			assert.Empty(t, unpublished(t, tr))
		})
	}
	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	assert.Len(t, msgs, 3)
}

// The size comes before the UTF-8 check: a huge text is refused without
// being read.
func TestLimits_SizeIsCheckedBeforeUTF8(t *testing.T) {
	tr := newTract(t, tract.WithLimits(tract.Limits{MessageSize: 4}))
	_, err := tr.User(context.Background(), "\xff\xff\xff\xff\xff")
	testinput.RequireTooLarge(t, err, tract.LimitMessageSize)
	_, err = tr.User(context.Background(), "\xff")
	assert.ErrorIs(t, err, tract.ErrInvalidText)
	assert.ErrorContains(t, err, "not valid UTF-8 (byte 0)")
}

// The metadata tract writes itself is not bound by the metadata limit:
// turn records carry diagnoses and summary records list every source.
func TestLimits_TractsOwnMetadataIsNotBound(t *testing.T) {
	ctx := context.Background()
	sc := llm.NewScripted(llm.Reply{Content: "not json"}, llm.Reply{Content: `{"ok":true}`})
	tr := newTract(t, tract.WithClient(sc), tract.WithLimits(tract.Limits{MetaSize: 2}))
	res, err := tr.Chat(ctx, "give JSON", tract.Validate(retry.JSON()))
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	cmpTurns(t, tr, 4, "m")
	_, err = tr.CompressRange(ctx, "", "", tract.KeepLast(1), tract.Summaries(cmpSummary))
	require.NoError(t, err)
}

// An answer over the message size limit cannot be an attempt: it fails
// the model call, and the turn ends as after any model failure, with an
// error commit that says why.
func TestLimits_ModelAnswerOverTheLimit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		replies []llm.Reply
		attempt int
		tokens  int
	}{
		{"first attempt", []llm.Reply{{Content: strings.Repeat("a", 201), Usage: llm.Usage{TotalTokens: 30}}}, 1, 30},
		{"after a rejected one", []llm.Reply{{Content: "not json", Usage: llm.Usage{TotalTokens: 5}}, {Content: strings.Repeat("a", 201), Usage: llm.Usage{TotalTokens: 30}}}, 2, 35},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := llm.NewScripted(tc.replies...)
			tr := newTract(t, tract.WithClient(sc), tract.WithLimits(tract.Limits{MessageSize: 200}))
			res, err := tr.Chat(ctx, "question", tract.Validate(retry.JSON()))
			tl := testinput.RequireTooLarge(t, err, tract.LimitMessageSize)
			assert.Equal(t, int64(201), tl.Size)
			assert.EqualError(t, err, fmt.Sprintf("chat: the model's answer (attempt %d) is 201 B, over the message size limit (200 B)", tc.attempt))
			require.NotNil(t, res)
			assert.Equal(t, tc.attempt-1, res.Attempts, "the answer refused is no attempt")
			assert.Equal(t, tc.tokens, res.Usage.TotalTokens, "what it cost is counted")

			log, err := tr.Log(ctx)
			require.NoError(t, err)
			require.Len(t, log, 2, "the user message and the error commit (purified)")
			assert.Equal(t, tract.KindError, log[0].Kind)
			assert.Equal(t, res.Commit, log[0].Hash)
			assert.True(t, strings.HasPrefix(log[0].Text, "model answer refused: the model's answer"), log[0].Text)
			assert.Equal(t, float64(tc.attempt), log[0].MetaValue("attempt"))
		})
	}
}

func TestLimits_ChatAndGenerateText(t *testing.T) {
	ctx := context.Background()
	sc := llm.NewScripted()
	tr := newTract(t, tract.WithClient(sc), tract.WithLimits(tract.Limits{MessageSize: 10}))
	_, err := tr.Chat(ctx, "a question too long")
	tl := testinput.RequireTooLarge(t, err, tract.LimitMessageSize)
	assert.Equal(t, "the text", tl.What)
	_, err = tr.Chat(ctx, "short", tract.SystemPrompt("a system prompt too long"))
	testinput.RequireTooLarge(t, err, tract.LimitMessageSize)
	_, err = tr.User(ctx, "hi")
	require.NoError(t, err)
	_, err = tr.Generate(ctx, tract.SystemPrompt("a system prompt too long"))
	testinput.RequireTooLarge(t, err, tract.LimitMessageSize)
	assert.Empty(t, sc.Requests(), "no model was asked")
	assert.Equal(t, 1, commitCount(t, tr))
}

func TestLimits_CompressSummaries(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("summary ", 30) // 240 bytes: under the sources, over the limit
	t.Run("given", func(t *testing.T) {
		tr := newCmpTract(t, tract.WithLimits(tract.Limits{MessageSize: 200}))
		cmpTurns(t, tr, 6, "m")
		snap := cmpSnap(t, tr)
		_, err := tr.CompressRange(ctx, "", "", tract.KeepLast(2), tract.Summaries(long))
		tl := testinput.RequireTooLarge(t, err, tract.LimitMessageSize)
		assert.Equal(t, "summary 1 of 1 given", tl.What)
		cmpUnchanged(t, tr, snap)
	})
	t.Run("from the model", func(t *testing.T) {
		sc := llm.NewScripted(llm.Reply{Content: long})
		tr := newCmpTract(t, tract.WithClient(sc), tract.WithLimits(tract.Limits{MessageSize: 200}))
		cmpTurns(t, tr, 6, "m")
		snap := cmpSnap(t, tr)
		_, err := tr.CompressRange(ctx, "", "", tract.KeepLast(2))
		tl := testinput.RequireTooLarge(t, err, tract.LimitMessageSize)
		assert.Equal(t, "the summary", tl.What)
		assert.ErrorContains(t, err, "compress: group 1 of 1 (4 commits from ")
		assert.Len(t, sc.Requests(), 1)
		cmpUnchanged(t, tr, snap)
	})
	t.Run("given, not UTF-8", func(t *testing.T) {
		tr := newCmpTract(t)
		cmpTurns(t, tr, 6, "m")
		snap := cmpSnap(t, tr)
		_, err := tr.CompressRange(ctx, "", "", tract.KeepLast(2), tract.Summaries("bad \xff summary"))
		assert.ErrorIs(t, err, tract.ErrInvalidText)
		cmpUnchanged(t, tr, snap)
	})
}

// Limits bound what enters, not what a repository already holds: a file
// written with larger limits reads back whole under smaller ones.
func TestLimits_DoNotBindWhatIsStored(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tract.db")
	tr, err := tract.Init(path, tract.WithNoSync())
	require.NoError(t, err)
	_, err = tr.User(ctx, strings.Repeat("x", 1000))
	require.NoError(t, err)
	require.NoError(t, tr.Close())

	tr, err = tract.Open(path, tract.WithLimits(tract.Limits{MessageSize: 10}))
	require.NoError(t, err)
	defer tr.Close()
	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Len(t, msgs[0].Content, 1000)
	r, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, r.OK())
}
