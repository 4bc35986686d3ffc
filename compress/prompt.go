package compress

import (
	"fmt"
	"strings"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/llm"
)

// SystemPrompt is the system message of the default summarization prompt.
const SystemPrompt = `You compress conversation history. You are given the transcript of part of a conversation between a user and an AI assistant, one message per entry, each starting with its speaker's role. Write a summary that replaces these messages in the assistant's context, so that the conversation can go on without them.

Keep facts, names, numbers, decisions and conclusions; what the user asked for, with their preferences and constraints; what the assistant did, produced or promised; and questions still open. Leave out greetings, repetition and anything that later messages superseded. Write in the third person ("The user asked ...", "The assistant explained ..."), in the language of the conversation, and do not add anything that is not in the transcript.

Reply with the summary only: no preamble, no heading, no closing remark.`

// PromptFunc builds the messages of a summarization request for items, with
// an optional target size in tokens (0 for none) and optional extra
// instructions ("" for none).
type PromptFunc func(items []Item, targetTokens int, instructions string) []llm.Message

var _ PromptFunc = DefaultPrompt

// DefaultPrompt is the default summarization prompt: SystemPrompt as the
// system message, then one user message holding the transcript of items
// (see Transcript) between "<transcript>" and "</transcript>" lines,
// followed by the target size when targetTokens > 0, the extra
// instructions when not empty, and a request to reply with the summary
// only:
//
//	Summarize the conversation in this transcript.
//
//	<transcript>
//	user: How do I reverse a list in Go?
//
//	assistant: Use slices.Reverse(s).
//	</transcript>
//
//	Target length: at most about 120 tokens.
//
//	Additional instructions: keep code identifiers verbatim.
//
//	Reply with the summary only.
func DefaultPrompt(items []Item, targetTokens int, instructions string) []llm.Message {
	var b strings.Builder
	b.WriteString("Summarize the conversation in this transcript.\n\n<transcript>\n")
	b.WriteString(Transcript(items))
	b.WriteString("\n</transcript>\n\n")
	if targetTokens > 0 {
		fmt.Fprintf(&b, "Target length: at most about %d tokens.\n\n", targetTokens)
	}
	if s := strings.TrimSpace(instructions); s != "" {
		fmt.Fprintf(&b, "Additional instructions: %s\n\n", s)
	}
	b.WriteString("Reply with the summary only.")
	return []llm.Message{
		{Role: string(dag.RoleSystem), Content: SystemPrompt},
		{Role: string(dag.RoleUser), Content: b.String()},
	}
}

// Transcript renders items as "role: text" entries, in order, separated by
// blank lines. A multi-line text continues on the following lines as it is.
func Transcript(items []Item) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(string(it.Role))
		b.WriteString(": ")
		b.WriteString(strings.TrimSpace(it.Text))
	}
	return b.String()
}

// RejectedPrefix starts the steering message that asks for a new summary
// after a rejected one; the diagnosis follows it.
const RejectedPrefix = "previous summary was rejected: "

// rejectionMessage is the user message appended to a summarization request
// after the model's rejected summary.
func rejectionMessage(diagnosis string) string {
	return RejectedPrefix + diagnosis + "\n\nWrite a new summary of the same transcript that fixes this. Reply with the summary only."
}
