package main

import (
	"bytes"
	"context"
	"strings"
	"unicode/utf8"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
)

// maxToolText bounds, in characters, the arguments and the result a tool
// call's line shows when it is not cut to a terminal's width.
const maxToolText = 300

// toolCallLine is the line that shows a tool call and its result:
// "tool: NAME(ARGS) → RESULT" (without " → RESULT" when result is ""),
// on one line, line breaks shown as "⏎". On a terminal (terminal is true)
// it is sanitised and cut to width; elsewhere the arguments and the
// result are each cut to maxToolText characters.
func toolCallLine(name, args, result string, terminal bool, width int) string {
	args, result = flatLine(args), flatLine(result)
	if !terminal || width <= 0 {
		args, result = cutText(args, maxToolText), cutText(result, maxToolText)
	}
	line := "tool: " + name + "(" + args + ")"
	if result != "" {
		line += " → " + result
	}
	if terminal {
		line = fitLine(screenText(line), width)
	}
	return line
}

// flatLine returns s trimmed, its line breaks shown as "⏎".
func flatLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", lineBreakMark)
}

// cutText returns s cut to n characters, "…" the last when it was cut.
func cutText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// maxToolHops bounds how far toolNames walks back from a tool result to
// the answer whose call it answers: past the other results of the same
// answer.
const maxToolHops = 64

// toolNames finds the tool a tool result answers: the tool its
// tool_step record names, or else the name of the call whose id its
// tool_call_id gives, in the answer before it (an imported tool message
// stores only the id). It learns the calls of the answers it is
// shown, and reads back from a result (with show) when the answer was not
// among them: a log lists a result before its call. A nil *toolNames
// knows no names.
type toolNames struct {
	ctx   context.Context
	show  func(ctx context.Context, rev string) (*tract.CommitInfo, error)
	names map[string]string // tool call id -> tool name
	// read holds the commits read back already, so that a long run of
	// results is read once.
	read map[tract.Hash]bool
}

func newToolNames(ctx context.Context, t *tract.Tract) *toolNames {
	return &toolNames{ctx: ctx, show: t.Show, names: map[string]string{}, read: map[tract.Hash]bool{}}
}

// learn notes the calls of m, an assistant's message.
func (n *toolNames) learn(m llm.Message) {
	if n == nil {
		return
	}
	for _, c := range m.ToolCalls {
		n.names[c.ID] = c.Function.Name
	}
}

// callOf returns the id of the call c answers and its tool's name: "" for
// the name when it cannot be found, and ok false when c is no tool result
// (a message of role tool with a tool_call_id).
func (n *toolNames) callOf(c *tract.CommitInfo) (id, name string, ok bool) {
	if c.Role != tract.RoleTool || !hasShape(c) {
		return "", "", false
	}
	m, err := c.Message()
	if err != nil || m.ToolCallID == "" {
		return "", "", false
	}
	// A validated turn's result records its tool.
	if step, ok := c.ToolStepRecord(); ok && step.Tool != "" {
		return m.ToolCallID, step.Tool, true
	}
	if n == nil {
		return m.ToolCallID, "", true
	}
	if name, ok := n.names[m.ToolCallID]; ok {
		return m.ToolCallID, name, true
	}
	// Back through the results of the same answer, to the answer.
	cur := c
	for range maxToolHops {
		if len(cur.Parents) == 0 || n.read[cur.Parents[0]] {
			break
		}
		parent := cur.Parents[0]
		n.read[parent] = true
		p, err := n.show(n.ctx, parent.String())
		if err != nil {
			break
		}
		if pm, err := p.Message(); err == nil {
			n.learn(pm)
		}
		if p.Role != tract.RoleTool {
			break
		}
		cur = p
	}
	return m.ToolCallID, n.names[m.ToolCallID], true
}

// learnCommit notes the calls of c when it is an answer that makes some.
func (n *toolNames) learnCommit(c *tract.CommitInfo) {
	if n == nil || c.Role != tract.RoleAssistant || !hasShape(c) {
		return
	}
	if m, err := c.Message(); err == nil {
		n.learn(m)
	}
}

// toolLabel is how a result names its call in one line: the tool's name,
// or, when it cannot be found, the call's id.
func toolLabel(id, name string) string {
	if name != "" {
		return name
	}
	return id
}

// callsLine is the one line of an answer that calls tools: its text's
// first line, if it has text, then "→ NAME(ARGS), NAME(ARGS)"; "" for any
// other commit.
func callsLine(c *tract.CommitInfo) string {
	if c.Role != tract.RoleAssistant || !hasShape(c) {
		return ""
	}
	m, err := c.Message()
	if err != nil || len(m.ToolCalls) == 0 {
		return ""
	}
	calls := make([]string, len(m.ToolCalls))
	for i, tc := range m.ToolCalls {
		calls[i] = tc.Function.Name + "(" + flatLine(tc.Function.Arguments) + ")"
	}
	line := "→ " + strings.Join(calls, ", ")
	if first, _, _ := strings.Cut(strings.TrimSpace(m.Content), "\n"); first != "" {
		line = first + " " + line
	}
	return line
}

// hasShape reports whether c keeps a message shape (tool calls, a call's
// id), without decoding the metadata of the many commits that have none.
func hasShape(c *tract.CommitInfo) bool {
	return bytes.Contains(c.Meta, []byte(`"`+tract.MetaShape+`"`))
}
