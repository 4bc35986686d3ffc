package retry

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/fuzzcheck"
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

func FuzzParseJudgeReply(f *testing.F) {
	for _, s := range []string{
		`{"pass": true, "reason": "it is polite"}`,
		"{\"pass\": false, \"reason\": \"  rude \\n\"}",
		"```json\n{\"pass\": false, \"reason\": \"rude\"}\n```",
		"```{\"pass\": true}```",
		"```json\n{\"pass\": true}",
		`{"pass": "yes"}`, `{"reason": 5}`, `{"pass": null}`, `null`, `[]`, `{"pass": true} and more`,
		"Sure! " + strings.Repeat("é", 150),
	} {
		f.Add(s, false, "a reason")
	}
	f.Fuzz(func(t *testing.T, reply string, pass bool, reason string) {
		_, gotReason, err := parseJudgeReply(reply)
		if err != nil {
			checkJudgeReplyError(t, err, reply)
		} else if gotReason != strings.TrimSpace(gotReason) {
			t.Fatalf("%q: reason %q is not trimmed", reply, gotReason)
		}

		// Every reply of the form JudgePrompt asks for is read back, bare
		// or fenced.
		if !utf8.ValidString(reason) {
			return // JSON cannot carry it
		}
		obj, err := json.Marshal(map[string]any{"pass": pass, "reason": reason})
		require.NoError(t, err)
		for _, r := range []string{string(obj), "```json\n" + string(obj) + "\n```", "```\n" + string(obj) + "```"} {
			p, why, err := parseJudgeReply(r)
			if err != nil || p != pass || why != strings.TrimSpace(reason) {
				t.Fatalf("%q gave (%v, %q, %v), want (%v, %q)", r, p, why, err, pass, strings.TrimSpace(reason))
			}
		}
	})
}

// checkJudgeReplyError checks an error of parseJudgeReply: a
// *JudgeReplyError for reply, whose message quotes the start of reply
// as valid UTF-8 when reply is.
func checkJudgeReplyError(t *testing.T, err error, reply string) {
	t.Helper()
	fuzzcheck.UserError(t, err)
	var je *JudgeReplyError
	if !errors.As(err, &je) || je.Reply != reply {
		t.Fatalf("%q: error %v is not a JudgeReplyError for the reply", reply, err)
	}
	msg := err.Error()
	// The reply is quoted after the reason: "…expected (REASON): "REPLY"; …"
	quoted, qerr := strconv.QuotedPrefix(msg[strings.LastIndex(msg, `): "`)+3:])
	if qerr != nil {
		t.Fatalf("message does not quote the reply: %v", err)
	}
	shown, _ := strconv.Unquote(quoted)
	shown = strings.TrimSuffix(shown, "…")
	if !strings.HasPrefix(reply, shown) {
		t.Fatalf("message quotes %q, not the start of %q", shown, reply)
	}
	if utf8.ValidString(reply) && !utf8.ValidString(shown) {
		t.Fatalf("message cuts a character of the reply: %q", quoted)
	}
}
