package llm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// anthropicMessage is one message of a Messages API request. Its content
// is a string (Text) when the message is only text, and content blocks
// when it has images, documents, tool calls or tool results.
type anthropicMessage struct {
	Role   string
	Text   string
	Blocks []anthropicContent
}

// MarshalJSON writes {"role", "content"}, the content a string or blocks.
func (m anthropicMessage) MarshalJSON() ([]byte, error) {
	var content any = m.Text
	if m.Blocks != nil {
		content = m.Blocks
	}
	return json.Marshal(struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}{m.Role, content})
}

// appendJSON appends m as MarshalJSON writes it (json.Marshal escapes
// HTML: "<" goes as \u003c).
func (m *anthropicMessage) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"role":`...)
	b = appendString(b, m.Role, true)
	b = append(b, `,"content":`...)
	if m.Blocks == nil {
		b = appendString(b, m.Text, true)
		return append(b, '}'), nil
	}
	b, err := appendArray(b, len(m.Blocks), func(b []byte, i int) ([]byte, error) { return m.Blocks[i].appendJSON(b) })
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// sizeHint is about the bytes of m's JSON.
func (m *anthropicMessage) sizeHint() int {
	n := 30 + len(m.Role) + len(m.Text)
	for i := range m.Blocks {
		c := &m.Blocks[i]
		n += 120 + len(c.Type) + len(c.Text) + len(c.ID) + len(c.Name) + len(c.Input) + len(c.ToolUseID) + len(c.Content)
		if c.Source != nil {
			n += 60 + len(c.Source.Type) + len(c.Source.MediaType) + len(c.Source.Data) + len(c.Source.URL)
		}
	}
	return n
}

// blocks returns m's content as blocks: its text as a text block when it
// has no blocks (none for no text).
func (m anthropicMessage) blocks() []anthropicContent {
	if m.Blocks != nil {
		return m.Blocks
	}
	if m.Text == "" {
		return []anthropicContent{}
	}
	return []anthropicContent{{Type: "text", Text: m.Text}}
}

// anthropicContent is a content block of a request: text, image,
// document, tool_use (an assistant's tool call) or tool_result (a tool
// message's answer).
type anthropicContent struct {
	Type      string           `json:"type"`
	Text      string           `json:"text,omitempty"`
	Source    *anthropicSource `json:"source,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Input     json.RawMessage  `json:"input,omitempty"`
	ToolUseID string           `json:"tool_use_id,omitempty"`
	Content   string           `json:"content,omitempty"`
}

// appendJSON appends c as json.Marshal writes it: HTML escaped, the
// empty members left out.
func (c *anthropicContent) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"type":`...)
	b = appendString(b, c.Type, true)
	str := func(key, v string) {
		if v != "" {
			b = appendKey(b, key, false)
			b = appendString(b, v, true)
		}
	}
	str("text", c.Text)
	if s := c.Source; s != nil {
		b = append(b, `,"source":{"type":`...)
		b = appendString(b, s.Type, true)
		str("media_type", s.MediaType)
		str("data", s.Data)
		str("url", s.URL)
		b = append(b, '}')
	}
	str("id", c.ID)
	str("name", c.Name)
	if len(c.Input) > 0 {
		b = append(b, `,"input":`...)
		var err error
		if b, err = appendCompact(b, c.Input, true); err != nil {
			return b, err
		}
	}
	str("tool_use_id", c.ToolUseID)
	str("content", c.Content)
	return append(b, '}'), nil
}

// anthropicSource is where an image or a document block's data is: inline
// (base64, with its media type) or at a URL.
type anthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// anthropicMessages maps tract's messages onto the Messages API: system
// messages, wherever they are, become the system text (joined by blank
// lines); assistant messages stay; any other role is the user's; and
// consecutive messages of one role are merged into one, joined by a blank
// line, as the API requires roles to alternate. The shapes beyond text
// become content blocks: a text part a text block, an image_url part an
// image (base64 from a data: URL, else by URL), a PDF file part a
// document, an assistant's tool call a tool_use block (its arguments, a
// JSON object, the input), and a tool message a tool_result block in a
// user message: the results of parallel calls, consecutive tool messages,
// go in one user message, results before any text merged into it. What the API has no place for (audio parts, files by id
// or of other types, an image URL that is neither data: nor http(s):) is
// an error wrapping ErrUnsupported; a name, and members kept in Extra,
// are not sent.
func anthropicMessages(in []Message) (system string, out []anthropicMessage, err error) {
	var sys []string
	// A run of messages of one role is merged when it ends, once: its
	// texts joined while none has blocks, else its blocks reordered (a
	// merge at each message copied the run again, and took minutes for
	// a run of 100,000).
	var texts []string // the run's texts, while it has no blocks
	merged := false    // the run has blocks of more than one message
	end := func() {
		if n := len(out); n > 0 && out[n-1].Blocks == nil && len(texts) > 1 {
			out[n-1].Text = strings.Join(texts, "\n\n")
		}
		if merged {
			out[len(out)-1].Blocks = toolResultsFirst(out[len(out)-1].Blocks)
		}
		texts, merged = texts[:0], false
	}
	for i, m := range in {
		if m.Role == "system" || m.Role == "developer" {
			sys = append(sys, m.Text())
			continue
		}
		am, err := anthropicMessageOf(m)
		if err != nil {
			return "", nil, fmt.Errorf("message %d (%s): %w", i+1, m.Role, err)
		}
		n := len(out)
		switch {
		case n == 0 || out[n-1].Role != am.Role:
			end()
			out = append(out, am)
			if am.Blocks == nil {
				texts = append(texts, am.Text)
			}
		case out[n-1].Blocks == nil && am.Blocks == nil:
			texts = append(texts, am.Text)
		default:
			if out[n-1].Blocks == nil {
				out[n-1].Text = strings.Join(texts, "\n\n")
			}
			out[n-1].Blocks = append(out[n-1].blocks(), am.blocks()...)
			merged = true
		}
	}
	end()
	return strings.Join(sys, "\n\n"), out, nil
}

// toolResultsFirst moves the tool_result blocks of a merged message before
// its other blocks, keeping the order of each: the API wants a user
// message's results first (a steering text that follows the results of
// parallel calls goes after them).
func toolResultsFirst(blocks []anthropicContent) []anthropicContent {
	slices.SortStableFunc(blocks, func(a, b anthropicContent) int {
		return cmp.Compare(boolInt(a.Type != "tool_result"), boolInt(b.Type != "tool_result"))
	})
	return blocks
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// anthropicMessageOf maps one message that is not a system message.
func anthropicMessageOf(m Message) (anthropicMessage, error) {
	role := "user"
	if m.Role == "assistant" {
		role = "assistant"
	}
	if m.Parts == nil && m.ToolCalls == nil && m.Role != "tool" {
		return anthropicMessage{Role: role, Text: m.Content}, nil
	}
	blocks := []anthropicContent{}
	if m.Role == "tool" {
		blocks = append(blocks, anthropicContent{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Text()})
		return anthropicMessage{Role: role, Blocks: blocks}, nil
	}
	if m.Content != "" {
		blocks = append(blocks, anthropicContent{Type: "text", Text: m.Content})
	}
	for i, p := range m.Parts {
		b, err := anthropicPart(p)
		if err != nil {
			return anthropicMessage{}, fmt.Errorf("content[%d]: %w", i, err)
		}
		if b != nil {
			blocks = append(blocks, *b)
		}
	}
	for i, c := range m.ToolCalls {
		input := json.RawMessage(c.Function.Arguments)
		if strings.TrimSpace(c.Function.Arguments) == "" {
			input = json.RawMessage("{}")
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(input, &obj) != nil {
			return anthropicMessage{}, fmt.Errorf("tool_calls[%d]: the arguments of %s are not a JSON object, which a tool_use input must be: %w",
				i, c.Function.Name, ErrUnsupported)
		}
		blocks = append(blocks, anthropicContent{Type: "tool_use", ID: c.ID, Name: c.Function.Name, Input: input})
	}
	return anthropicMessage{Role: role, Blocks: blocks}, nil
}

// anthropicPart maps a content part to a block (nil for an empty text).
func anthropicPart(p Part) (*anthropicContent, error) {
	switch p.Type {
	case PartText:
		if p.Text == "" {
			return nil, nil // the API refuses empty text blocks
		}
		return &anthropicContent{Type: "text", Text: p.Text}, nil
	case PartImageURL:
		src, err := anthropicSourceOf(p.ImageURL.URL, true)
		if err != nil {
			return nil, fmt.Errorf("image_url: %w", err)
		}
		return &anthropicContent{Type: "image", Source: src}, nil
	case PartFile:
		if p.File.FileData == "" {
			return nil, fmt.Errorf("file: a file by id (%s) is OpenAI's to resolve: %w", p.File.FileID, ErrUnsupported)
		}
		src, err := anthropicSourceOf(p.File.FileData, false)
		if err != nil {
			return nil, fmt.Errorf("file: %w", err)
		}
		if src.MediaType != "application/pdf" {
			return nil, fmt.Errorf("file: %s documents cannot be sent to Anthropic (PDF only): %w", src.MediaType, ErrUnsupported)
		}
		return &anthropicContent{Type: "document", Source: src}, nil
	}
	return nil, fmt.Errorf("%s parts cannot be sent to Anthropic: %w", p.Type, ErrUnsupported)
}

// anthropicSourceOf returns the source of a data: URL (base64 only), or
// with byURL of an http(s) URL.
func anthropicSourceOf(u string, byURL bool) (*anthropicSource, error) {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isBase64 || mediaType == "" {
			return nil, fmt.Errorf("a data: URL must be base64 with a media type (data:image/png;base64,…): %w", ErrUnsupported)
		}
		return &anthropicSource{Type: "base64", MediaType: mediaType, Data: data}, nil
	}
	if byURL && (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) {
		return &anthropicSource{Type: "url", URL: u}, nil
	}
	return nil, fmt.Errorf("%.40q is neither a data: URL nor an http(s) URL: %w", u, ErrUnsupported)
}
