package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/jsonerr"
	"github.com/tractdag/tract/record"
)

// ReadConversations returns the conversations of r, read as a stream, in
// the OpenAI supervised fine-tuning format that tract export writes: one
// JSON object a line, {"messages":[…]}, each message an OpenAI message as
// ReadMessages reads it (and with the same checks), optionally with a
// "weight" of 0 or 1, which is kept in the message's metadata under
// record.KeyWeight. Blank lines are skipped. A line with a key other than
// "messages", no messages, a weight other than 0 or 1 or a message
// ReadMessages refuses ends the sequence with an error naming the line
// (and the message).
//
// Memory holds one conversation at a time: a line may be up to the line
// size limit long (see Limits and ReadLimits), the whole input up to the
// input size limit.
func ReadConversations(r io.Reader, opts ...ReadOption) iter.Seq2[Conversation, error] {
	var lim Limits
	for _, o := range opts {
		o(&lim)
	}
	lim = lim.WithDefaults()
	return func(yield func(Conversation, error) bool) {
		br := bufio.NewReaderSize(&cappedReader{r: r, left: lim.InputSize}, 64<<10)
		var buf []byte
		for n := 1; ; n++ {
			line, err := readLine(br, buf[:0], lim.LineSize)
			buf = line
			switch {
			case errors.Is(err, errInputLimit):
				yield(Conversation{}, &conversationError{Line: n, Err: &TooLargeError{What: "the input",
					Size: lim.InputSize, More: true, Limit: lim.InputSize, Which: LimitInputSize}})
				return
			case errors.Is(err, errLineLimit):
				yield(Conversation{}, &conversationError{Line: n, Err: &TooLargeError{What: "the line",
					Size: lim.LineSize, More: true, Limit: lim.LineSize, Which: LimitLineSize}})
				return
			case err != nil && err != io.EOF:
				yield(Conversation{}, fmt.Errorf("read input: %w", err))
				return
			}
			if len(bytes.TrimSpace(line)) > 0 {
				msgs, cerr := conversation(line, lim)
				if cerr != nil {
					yield(Conversation{}, &conversationError{Line: n, Err: cerr})
					return
				}
				if !yield(Conversation{Messages: msgs, Line: n}, nil) {
					return
				}
			}
			if err == io.EOF {
				return
			}
			if cap(buf) > 1<<20 {
				buf = nil // one long line does not keep its size for the rest
			}
		}
	}
}

// Conversation is a conversation to import (see package tract's
// ImportConversations).
type Conversation struct {
	// Messages are its messages, oldest first.
	Messages []Message
	// Line is the line of the input it was read from (0 when it was not
	// read from one).
	Line int
}

// readLine appends the next line of br (without its newline) to buf, or
// fails with errLineLimit once it is longer than limit.
func readLine(br *bufio.Reader, buf []byte, limit int64) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if int64(len(buf))+int64(len(chunk)) > limit+1 {
			return buf, errLineLimit
		}
		buf = append(buf, chunk...)
		switch err {
		case nil:
			return bytes.TrimSuffix(buf, []byte{'\n'}), nil
		case bufio.ErrBufferFull:
			continue
		}
		return buf, err
	}
}

// conversation decodes one line of the OpenAI fine-tuning format.
func conversation(line []byte, lim Limits) ([]Message, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		if err == nil {
			err = errors.New("got null")
		}
		return nil, fmt.Errorf(`not a JSON object {"messages":[…]}: %w`, jsonerr.Wrap(err))
	}
	for k := range obj {
		if k != "messages" {
			return nil, fmt.Errorf(`field %q is not supported: tract imports a conversation's "messages" only`, k)
		}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(obj["messages"], &elems); err != nil || len(elems) == 0 {
		if _, ok := obj["messages"]; !ok || err == nil {
			return nil, errors.New(`no messages: a line is {"messages":[…]} with at least one message`)
		}
		return nil, fmt.Errorf(`"messages" is not an array of messages: %w`, jsonerr.Wrap(err))
	}
	// Take each message's weight out, and hand the rest to ReadMessages as
	// an array, so a message reads exactly as tract import reads it.
	weights := make([]json.RawMessage, len(elems))
	var arr bytes.Buffer
	arr.WriteByte('[')
	for i, e := range elems {
		if i > 0 {
			arr.WriteByte(',')
		}
		if bytes.Contains(e, []byte(`"weight"`)) {
			var m map[string]json.RawMessage
			if json.Unmarshal(e, &m) == nil {
				if w, ok := m["weight"]; ok {
					if s := string(w); s != "0" && s != "1" {
						return nil, &MessageError{N: i + 1, Err: fmt.Errorf(`"weight" is %s; it is 0 or 1`, record.DescribeJSON(w))}
					}
					weights[i] = w
					delete(m, "weight")
					e, _ = json.Marshal(m) // values are raw: marshalled as they were
				}
			}
		}
		arr.Write(e)
	}
	arr.WriteByte(']')
	msgs := make([]Message, 0, len(elems))
	for m, err := range ReadMessages(&arr, ReadLimits(lim)) {
		if err != nil {
			var me *MessageError
			if errors.As(err, &me) {
				return nil, &MessageError{N: me.N, Err: me.Err} // its line is the array's, not the input's
			}
			return nil, err
		}
		if w := weights[len(msgs)]; w != nil {
			meta, err := withMetaKey(m.Meta, record.KeyWeight, w)
			if err != nil {
				return nil, &MessageError{N: len(msgs) + 1, Err: err}
			}
			m.Meta = meta
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// withMetaKey returns the metadata object meta with key set to v.
func withMetaKey(meta json.RawMessage, key string, v json.RawMessage) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &m); err != nil {
			return nil, fmt.Errorf("%w: %v", dag.ErrInvalidMeta, err)
		}
	}
	if _, ok := m[key]; ok && !bytes.Equal(m[key], v) {
		return nil, fmt.Errorf("%w: %q given twice, as the message's %q and in its metadata", dag.ErrInvalidMeta, key, key)
	}
	m[key] = v
	return json.Marshal(m)
}

// conversationError is a line of ReadConversations' input that cannot be
// imported.
type conversationError struct {
	Line int
	Err  error
}

func (e *conversationError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *conversationError) Unwrap() error { return e.Err }
