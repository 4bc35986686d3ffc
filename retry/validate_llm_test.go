package retry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeJudge replies with reply and records the prompts it was sent.
type fakeJudge struct {
	reply   string
	err     error
	prompts []string
}

func (f *fakeJudge) judge(ctx context.Context, prompt string) (string, error) {
	f.prompts = append(f.prompts, prompt)
	return f.reply, f.err
}

func TestJudgeValidator(t *testing.T) {
	tests := []struct {
		name, reply string
		want        string // "" means the answer passes
	}{
		{"pass", `{"pass": true, "reason": "it is polite"}`, ""},
		{"fail with reason", `{"pass": false, "reason": "The answer insults the user."}`, "The answer insults the user."},
		{"reason trimmed", "{\"pass\": false, \"reason\": \"  rude \\n\"}", "rude"},
		{"fail without reason", `{"pass": false}`, "the judge found that the answer does not meet the criteria: the answer is polite"},
		{"fenced", "```json\n{\"pass\": false, \"reason\": \"rude\"}\n```", "rude"},
		{"fenced without info string", "  ```\n{\"pass\": true}\n```\n", ""},
		{"fenced on one line", "```{\"pass\": true}```", ""},
		{"extra fields ignored", `{"pass": true, "reason": "ok", "confidence": 0.9}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &fakeJudge{reply: tt.reply}
			v, err := ParseSpec("llm:the answer is polite", WithJudge(j.judge))
			require.NoError(t, err)
			assert.Equal(t, "llm:the answer is polite", v.Name())

			ok, diagnosis, err := v.Validate(t.Context(), "Hello!")

			require.NoError(t, err)
			assert.Equal(t, tt.want == "", ok)
			assert.Equal(t, tt.want, diagnosis)
			assert.Equal(t, []string{JudgePrompt("the answer is polite", "Hello!")}, j.prompts)
		})
	}
}

// A reply that is not the JSON object the prompt asks for is the judge's
// fault, not the answer's: a run error, never a diagnosis.
func TestJudgeValidator_BadReplyIsARunError(t *testing.T) {
	tests := []struct {
		name, reply, reason string
	}{
		{"prose", "Yes, it is polite.", "not a JSON object"},
		{"empty", "", "not a JSON object"},
		{"array", `[true]`, "not a JSON object"},
		{"no pass field", `{"reason": "fine"}`, `no "pass" field`},
		{"pass not boolean", `{"pass": "yes"}`, `"pass" is not a boolean`},
		{"reason not string", `{"pass": false, "reason": 3}`, `"reason" is not a string`},
		{"text after", `{"pass": true} I think`, "not a JSON object"},
		{"unterminated fence", "```json\n{\"pass\": true}", "unterminated code block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &fakeJudge{reply: tt.reply}
			v := Judge("polite", j.judge)

			ok, diagnosis, err := v.Validate(t.Context(), "Hello!")

			var re *JudgeReplyError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tt.reply, re.Reply)
			assert.Equal(t, tt.reason, re.Reason)
			assert.False(t, ok)
			assert.Empty(t, diagnosis)
		})
	}
}

func TestJudgeReplyError_QuotesABoundedPrefix(t *testing.T) {
	tests := []struct {
		name, reply, quoted string
	}{
		{"short", "Yes.", `"Yes."`},
		{"control characters escaped", "ok\n\x00", `"ok\n\x00"`},
		{"cut at 120 characters, not inside one", strings.Repeat("é", 200), `"` + strings.Repeat("é", 120) + `…"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := (&JudgeReplyError{Reply: tt.reply, Reason: "not a JSON object"}).Error()

			assert.Equal(t, `the judge model's reply is not the JSON verdict expected (not a JSON object): `+tt.quoted+
				`; want only {"pass": true or false, "reason": "..."}`, msg)
		})
	}
}

func TestJudgeValidator_JudgeErrorIsARunError(t *testing.T) {
	errModel := errors.New("model unavailable")
	j := &fakeJudge{err: errModel}

	_, _, err := Judge("polite", j.judge).Validate(t.Context(), "Hi")

	require.ErrorIs(t, err, errModel)
	assert.EqualError(t, err, "judge: model unavailable")
}

func TestJudgeValidator_ConfigurationErrors(t *testing.T) {
	_, err := ParseSpec("llm:the answer is polite")
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Error(), "needs a judge model")

	_, err = ParseSpec("llm: ", WithJudge((&fakeJudge{}).judge))
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Error(), "llm needs criteria")
}

func TestJudgePrompt(t *testing.T) {
	want := `You are a strict reviewer. Decide whether the answer below meets the criteria.

<criteria>
cites a source
</criteria>

<answer>
The sky is blue.
</answer>

Reply with only a JSON object and no other text:
{"pass": true or false, "reason": "one or two sentences: what fails the criteria, or why it passes"}`
	assert.Equal(t, want, JudgePrompt("cites a source", "The sky is blue."))
}
