package retry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// JudgeFunc asks a model one question and returns its reply. It is how the
// "llm:" validator reaches a model without this package depending on a model
// client: wrap your client's call in one and pass it with [WithJudge] or
// [Judge]. An error is a run error, not a diagnosis.
type JudgeFunc func(ctx context.Context, prompt string) (string, error)

// JudgeReplyError reports a judge reply that is not the JSON verdict
// [JudgePrompt] asks for. It is a run error, not a diagnosis: the answer
// being judged is not at fault, and was not judged.
type JudgeReplyError struct {
	Reply  string // the judge's reply, as received
	Reason string // what is wrong with it
}

// judgeReplyQuoted bounds how much of the reply a JudgeReplyError quotes,
// in characters.
const judgeReplyQuoted = 120

// Error returns the JudgeReplyError message, which quotes the start of the
// reply.
func (e *JudgeReplyError) Error() string {
	reply := e.Reply
	if n := utf8.RuneCountInString(reply); n > judgeReplyQuoted {
		cut := 0
		for range judgeReplyQuoted {
			_, size := utf8.DecodeRuneInString(reply[cut:])
			cut += size
		}
		reply = reply[:cut] + "…"
	}
	return fmt.Sprintf(`the judge model's reply is not the JSON verdict expected (%s): %q; want only {"pass": true or false, "reason": "..."}`, e.Reason, reply)
}

// Judge returns the validator of the spec "llm:CRITERIA": judge is asked,
// with the prompt [JudgePrompt] builds, whether the answer meets criteria,
// and the answer passes when it replies {"pass": true, ...}. The diagnosis
// is the judge's reason. A reply that is not that JSON object (a fenced code
// block around it is accepted) is a *JudgeReplyError, a run error.
func Judge(criteria string, judge JudgeFunc) Validator {
	return &judgeValidator{name: "llm:" + criteria, criteria: criteria, judge: judge}
}

type judgeValidator struct {
	name     string
	criteria string
	judge    JudgeFunc
}

// judgeKind is the kind "llm:CRITERIA".
func judgeKind() Kind {
	return Kind{
		Name: "llm", Arg: "CRITERIA", Summary: "a judge model finds that CRITERIA holds",
		Build: newJudge,
	}
}

func newJudge(s Spec) (Validator, error) {
	if strings.TrimSpace(s.Arg) == "" {
		return nil, s.SyntaxError("llm needs criteria, as in llm:the answer is polite")
	}
	if s.Judge == nil {
		return nil, s.BuildError("an llm validator needs a judge model", ErrNoJudge)
	}
	return &judgeValidator{name: s.Text, criteria: s.Arg, judge: s.Judge}, nil
}

func (v *judgeValidator) Name() string { return v.name }

func (v *judgeValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	vd, err := Check(ctx, v, answer)
	return vd.OK, vd.Diagnosis, err
}

// Check asks the judge; a rejection is of type FailureRejected.
func (v *judgeValidator) Check(ctx context.Context, answer string) (Verdict, error) {
	reply, err := v.judge(ctx, JudgePrompt(v.criteria, answer))
	if err != nil {
		return Verdict{}, fmt.Errorf("judge: %w", err)
	}
	pass, reason, err := parseJudgeReply(reply)
	if err != nil {
		return Verdict{}, err
	}
	if pass {
		return Verdict{OK: true}, nil
	}
	if reason == "" {
		reason = "the judge found that the answer does not meet the criteria: " + v.criteria
	}
	return Verdict{Diagnosis: reason, Type: FailureRejected}, nil
}

// JudgePrompt is the prompt an "llm:" validator sends to its judge: the
// criteria and the answer, each between tags, and the instruction to reply
// with only {"pass": true|false, "reason": "..."}.
func JudgePrompt(criteria, answer string) string {
	return `You are a strict reviewer. Decide whether the answer below meets the criteria.

<criteria>
` + criteria + `
</criteria>

<answer>
` + answer + `
</answer>

Reply with only a JSON object and no other text:
{"pass": true or false, "reason": "one or two sentences: what fails the criteria, or why it passes"}`
}

// parseJudgeReply reads {"pass": ..., "reason": ...}, optionally inside a
// fenced code block.
func parseJudgeReply(reply string) (pass bool, reason string, err error) {
	text := strings.TrimSpace(reply)
	if rest, ok := strings.CutPrefix(text, "```"); ok {
		body, closed := strings.CutSuffix(rest, "```")
		if !closed {
			return false, "", &JudgeReplyError{Reply: reply, Reason: "unterminated code block"}
		}
		// Drop the info string (```json) on the opening line.
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:]
		}
		text = strings.TrimSpace(body)
	}
	var r struct {
		Pass   *bool  `json:"pass"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return false, "", &JudgeReplyError{Reply: reply, Reason: fmt.Sprintf("%q is not a %s", typeErr.Field, kindOf(typeErr.Field))}
		}
		return false, "", &JudgeReplyError{Reply: reply, Reason: "not a JSON object"}
	}
	if r.Pass == nil {
		return false, "", &JudgeReplyError{Reply: reply, Reason: `no "pass" field`}
	}
	return *r.Pass, strings.TrimSpace(r.Reason), nil
}

func kindOf(field string) string {
	if field == "pass" {
		return "boolean"
	}
	return "string"
}
