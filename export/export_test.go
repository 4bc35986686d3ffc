package export_test

import (
	"bytes"
	"errors"
	"iter"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/export"
	"github.com/tractdag/tract/llm"
)

// seq yields msgs.
func seq[T any](msgs ...T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for _, m := range msgs {
			if !yield(m, nil) {
				return
			}
		}
	}
}

func one(n int) *int { return &n }

var (
	user   = llm.Message{Role: "user", Content: "2+2? <quick>"}
	good   = llm.Message{Role: "assistant", Content: "4"}
	bad    = llm.Message{Role: "assistant", Content: "5"}
	worse  = llm.Message{Role: "assistant", Content: "22"}
	prompt = seq(llm.Message{Role: "system", Content: "Be brief."}, user)
)

func TestWriter(t *testing.T) {
	const p = `[{"role":"system","content":"Be brief."},{"role":"user","content":"2+2? <quick>"}]`
	tests := []struct {
		name   string
		format export.Format
		write  func(w *export.Writer) error
		want   string
	}{
		{"openai", export.OpenAI, func(w *export.Writer) error {
			return w.Conversation(seq(export.Message{Message: user}, export.Message{Message: good, Weight: one(1)}))
		}, `{"messages":[{"role":"user","content":"2+2? <quick>"},{"role":"assistant","content":"4","weight":1}]}` + "\n"},
		{"openai, no messages: no line", export.OpenAI, func(w *export.Writer) error {
			return w.Conversation(seq[export.Message]())
		}, ""},
		{"openai-preference: a line per rejected answer", export.OpenAIPreference, func(w *export.Writer) error {
			return w.Turn(export.Turn{Prompt: prompt, Accepted: &good, Rejected: []llm.Message{bad, worse}})
		}, `{"input":{"messages":` + p + `},"preferred_output":[{"role":"assistant","content":"4"}],"non_preferred_output":[{"role":"assistant","content":"5"}]}` + "\n" +
			`{"input":{"messages":` + p + `},"preferred_output":[{"role":"assistant","content":"4"}],"non_preferred_output":[{"role":"assistant","content":"22"}]}` + "\n"},
		{"trl-preference", export.TRLPreference, func(w *export.Writer) error {
			return w.Turn(export.Turn{Prompt: prompt, Accepted: &good, Rejected: []llm.Message{bad}})
		}, `{"prompt":` + p + `,"chosen":[{"role":"assistant","content":"4"}],"rejected":[{"role":"assistant","content":"5"}]}` + "\n"},
		{"a pair needs an accepted answer", export.TRLPreference, func(w *export.Writer) error {
			return w.Turn(export.Turn{Prompt: prompt, Rejected: []llm.Message{bad}})
		}, ""},
		{"trl-kto", export.TRLKTO, func(w *export.Writer) error {
			return w.Turn(export.Turn{Prompt: prompt, Accepted: &good, Rejected: []llm.Message{bad}})
		}, `{"prompt":` + p + `,"completion":[{"role":"assistant","content":"4"}],"label":true}` + "\n" +
			`{"prompt":` + p + `,"completion":[{"role":"assistant","content":"5"}],"label":false}` + "\n"},
		{"trl-kto without an accepted answer", export.TRLKTO, func(w *export.Writer) error {
			return w.Turn(export.Turn{Prompt: prompt, Rejected: []llm.Message{bad}})
		}, `{"prompt":` + p + `,"completion":[{"role":"assistant","content":"5"}],"label":false}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			w := export.NewWriter(&b, tt.format)
			require.NoError(t, tt.write(w))
			require.NoError(t, w.Flush())
			assert.Equal(t, tt.want, b.String())
			assert.Equal(t, bytes.Count(b.Bytes(), []byte("\n")), w.Lines())
		})
	}
}

func TestWriter_Errors(t *testing.T) {
	var b bytes.Buffer
	boom := errors.New("boom")
	w := export.NewWriter(&b, export.OpenAI)
	err := w.Conversation(func(yield func(export.Message, error) bool) { yield(export.Message{}, boom) })
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 0, w.Lines())
	assert.ErrorContains(t, w.Turn(export.Turn{Prompt: prompt, Accepted: &good}), "writes conversations")
	assert.ErrorContains(t, export.NewWriter(&b, export.TRLKTO).Conversation(seq[export.Message]()), "writes validated turns")
}

func TestParse(t *testing.T) {
	for _, f := range export.Formats {
		got, err := export.ParseFormat(string(f))
		require.NoError(t, err)
		assert.Equal(t, f, got)
	}
	_, err := export.ParseFormat("csv")
	assert.ErrorIs(t, err, export.ErrUnknownFormat)
	assert.ErrorContains(t, err, "openai, openai-preference, trl-preference, trl-kto")
	w, err := export.ParseWeights("assistant-last")
	require.NoError(t, err)
	assert.Equal(t, export.WeightsAssistantLast, w)
	_, err = export.ParseWeights("all")
	assert.ErrorIs(t, err, export.ErrUnknownWeights)
}

func ExampleWriter_Turn() {
	w := export.NewWriter(os.Stdout, export.TRLPreference)
	accepted := llm.Message{Role: "assistant", Content: `{"sum":4}`}
	_ = w.Turn(export.Turn{
		Prompt:   seq(llm.Message{Role: "user", Content: "2+2 as JSON"}),
		Accepted: &accepted,
		Rejected: []llm.Message{{Role: "assistant", Content: "four"}},
	})
	_ = w.Flush()
	// Output:
	// {"prompt":[{"role":"user","content":"2+2 as JSON"}],"chosen":[{"role":"assistant","content":"{\"sum\":4}"}],"rejected":[{"role":"assistant","content":"four"}]}
}
