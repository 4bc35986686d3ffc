package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
)

// renderShape prints what a commit's message shape holds besides its text
// (which already shows the parts and the tool calls): the name, the call a
// tool message answers, the ids of the calls, the parts' types and the
// members kept as they came. It prints nothing for a plain message.
func renderShape(w io.Writer, c *tract.CommitInfo) {
	if c.MetaValue(tract.MetaShape) == nil {
		return
	}
	m, err := c.Message()
	if err != nil {
		fmt.Fprintf(w, "\nMessage shape: unreadable: %v\n", err)
		return
	}
	fmt.Fprintln(w, "\nMessage shape:")
	row := func(k, v string) { fmt.Fprintf(w, "  %-14s %s\n", k+":", v) }
	if m.Name != "" {
		row("name", m.Name)
	}
	if m.ToolCallID != "" {
		row("tool_call_id", m.ToolCallID)
	}
	switch {
	case m.Parts != nil:
		types := make([]string, len(m.Parts))
		for i, p := range m.Parts {
			types[i] = p.Type
			if p.ImageURL != nil && p.ImageURL.Detail != "" {
				types[i] += " (detail " + p.ImageURL.Detail + ")"
			}
		}
		row("content", fmt.Sprintf("%d parts: %s", len(m.Parts), strings.Join(types, ", ")))
	case m.NullContent():
		row("content", "null")
	}
	for _, tc := range m.ToolCalls {
		row("tool call", tc.ID+" "+tc.Function.Name)
	}
	if len(m.Extra) > 0 {
		keys := make([]string, 0, len(m.Extra))
		for k := range m.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		row("also", strings.Join(keys, ", "))
	}
}

// metaWithoutShape returns a commit's metadata without the message shape,
// which renderShape shows in words (and whose data: URLs would flood the
// screen); nil when nothing else is left.
func metaWithoutShape(meta json.RawMessage) json.RawMessage {
	if !strings.Contains(string(meta), `"`+tract.MetaShape+`"`) {
		return meta
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(meta, &fields) != nil {
		return meta
	}
	delete(fields, tract.MetaShape)
	if len(fields) == 0 {
		return nil
	}
	out, err := marshalNoEscape(fields)
	if err != nil {
		return meta
	}
	return out
}

// marshalNoEscape is json.Marshal without HTML escaping.
func marshalNoEscape(v any) ([]byte, error) {
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// printToolCalls prints the tool calls of a streamed answer, a line each
// as its text shows them: the stream carried only the answer's text.
func printToolCalls(w io.Writer, res *tract.ChatResult) {
	if len(res.ToolCalls) > 0 {
		fmt.Fprintln(w, llm.Message{ToolCalls: res.ToolCalls}.Text())
	}
}
