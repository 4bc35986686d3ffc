package retry

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Analysis is what analysing a failure found: a guess at its root cause
// and a fix for the next attempt. Either may be empty.
type Analysis struct {
	RootCauseGuess string `json:"root_cause_guess"`
	SuggestedFix   string `json:"suggested_fix"`
}

// AnalysisPrompt is the prompt that asks a model to analyse failure f of
// answer: the failure (type, and its diagnosis once: the summary, then
// the details when they say more than it) and the answer, each between
// tags, and the instruction to reply with only
// {"root_cause_guess": "...", "suggested_fix": "..."}. Text is placed as
// is, as in JudgePrompt.
func AnalysisPrompt(f Failure, answer string) string {
	return `An answer to a task failed a check. Find the most likely root cause of the failure and what the next attempt should do differently.

<failure type="` + string(f.Type) + `">
` + f.diagnosis() + `
</failure>

<answer>
` + answer + `
</answer>

Reply with only a JSON object and no other text:
{"root_cause_guess": "one sentence: why the answer failed", "suggested_fix": "one or two sentences: what the next answer must do"}`
}

// AnalysisReplyError reports a reply to AnalysisPrompt that is not the JSON
// object it asks for.
type AnalysisReplyError struct {
	// Reply is the reply as received.
	Reply string
}

// Error returns the AnalysisReplyError message, which quotes the start of
// the reply.
func (e *AnalysisReplyError) Error() string {
	r := []rune(strings.TrimSpace(e.Reply))
	if len(r) > 60 {
		r = append(r[:60], '…')
	}
	return fmt.Sprintf(`analysis reply is not {"root_cause_guess": …, "suggested_fix": …}: %q`, string(r))
}

// ParseAnalysis reads a reply to AnalysisPrompt, optionally inside a
// fenced code block. A reply that is no such object, or has neither field,
// is an *AnalysisReplyError.
func ParseAnalysis(reply string) (Analysis, error) {
	text := strings.TrimSpace(reply)
	if rest, ok := strings.CutPrefix(text, "```"); ok {
		body, _ := strings.CutSuffix(rest, "```")
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:] // drop the info string (```json)
		}
		text = strings.TrimSpace(body)
	}
	var a Analysis
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		return Analysis{}, &AnalysisReplyError{Reply: reply}
	}
	a.RootCauseGuess, a.SuggestedFix = strings.TrimSpace(a.RootCauseGuess), strings.TrimSpace(a.SuggestedFix)
	if a.RootCauseGuess == "" && a.SuggestedFix == "" {
		return Analysis{}, &AnalysisReplyError{Reply: reply}
	}
	return a, nil
}

// diagnosis is f's summary and details as one text that holds each once:
// the details alone when the summary is their first line (as a turn's
// failure record has it, cut or not) or when there is no summary, the
// summary alone when the details are blank or the same, else the summary,
// a blank line and the details.
func (f Failure) diagnosis() string {
	summary, details := strings.TrimSpace(f.Summary), strings.TrimSpace(f.Details)
	switch {
	case details == "" || details == summary:
		return summary
	case summary == "":
		return details
	}
	first := details
	if i := strings.IndexAny(details, "\r\n"); i >= 0 {
		first = strings.TrimSpace(details[:i])
	}
	if cut, ok := strings.CutSuffix(summary, "…"); first == summary || ok && strings.HasPrefix(first, cut) {
		return details
	}
	return summary + "\n\n" + details
}
