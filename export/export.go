package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"

	"github.com/tractdag/tract/llm"
)

// Format names a data set format.
type Format string

// The formats a Writer writes.
const (
	// OpenAI is supervised fine-tuning JSONL: one conversation a line,
	// {"messages":[…]}, a message optionally with a "weight" (0 or 1).
	OpenAI Format = "openai"
	// OpenAIPreference is OpenAI's preference fine-tuning JSONL: one
	// (accepted, rejected) pair a line, {"input":{"messages":[…]},
	// "preferred_output":[…],"non_preferred_output":[…]}.
	OpenAIPreference Format = "openai-preference"
	// TRLPreference is the conversational preference shape of TRL's DPO
	// trainer: {"prompt":[…],"chosen":[…],"rejected":[…]}.
	TRLPreference Format = "trl-preference"
	// TRLKTO is the conversational unpaired shape of TRL's KTO trainer:
	// {"prompt":[…],"completion":[…],"label":true|false}, one answer a
	// line.
	TRLKTO Format = "trl-kto"
)

// Formats lists every format, in the order the documentation gives them.
var Formats = []Format{OpenAI, OpenAIPreference, TRLPreference, TRLKTO}

var (
	// ErrUnknownFormat is the error of ParseFormat for a name it does
	// not know.
	ErrUnknownFormat = errors.New("unknown export format")
	// ErrUnknownWeights is the error of ParseWeights for a name it does
	// not know.
	ErrUnknownWeights = errors.New("unknown weighting")
	// ErrUnknownGraphFormat is the error of NewGraphWriter for a format
	// it does not know.
	ErrUnknownGraphFormat = errors.New("unknown graph format")
)

// ParseFormat returns the format named s.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("%w %q (formats: %s)", ErrUnknownFormat, s, strings.Join(names, ", "))
}

// Conversational reports whether f writes whole conversations (OpenAI)
// rather than the answers of validated turns (the preference formats).
func (f Format) Conversational() bool { return f == OpenAI }

// Weights says which messages of a conversation get a "weight" in the
// OpenAI format.
type Weights string

// The weightings of the OpenAI format.
const (
	// WeightsRecorded writes the weight a message was imported with (see
	// tract.MetaWeight) and no other: the default, so that an exported
	// file imported and exported again comes out the same.
	WeightsRecorded Weights = "recorded"
	// WeightsNone writes no weights: every assistant message is trained
	// on.
	WeightsNone Weights = "none"
	// WeightsAssistantLast writes weight 1 on the last assistant message
	// and 0 on every assistant message before it: the conversation's
	// history is context, only its last answer is trained on.
	WeightsAssistantLast Weights = "assistant-last"
)

// ParseWeights returns the weighting named s.
func ParseWeights(s string) (Weights, error) {
	switch w := Weights(s); w {
	case WeightsRecorded, WeightsNone, WeightsAssistantLast:
		return w, nil
	}
	return "", fmt.Errorf("%w %q (weightings: recorded, none, assistant-last)", ErrUnknownWeights, s)
}

// Message is a message of a conversation to write.
type Message struct {
	llm.Message
	// Weight, when not nil, is written as the message's "weight" (the
	// OpenAI format; 0 or 1).
	Weight *int
}

// Turn is a validated turn to write in a preference format: the context
// it started from, its accepted answer (none when every attempt failed)
// and its rejected answers, oldest first.
type Turn struct {
	// Prompt yields the context the turn started from, oldest first. It is
	// ranged over once per line written, so it must yield the same
	// messages each time.
	Prompt iter.Seq2[llm.Message, error]
	// Accepted is the answer the validators accepted; nil when none was.
	Accepted *llm.Message
	// Rejected are the answers the validators rejected.
	Rejected []llm.Message
}

// Writer writes examples in one format, a JSON object a line. Messages
// are written as encoding/json marshals llm.Message, so every message
// shape llm.Message holds is written as it is. A Writer buffers: call
// Flush at the end.
type Writer struct {
	w      *bufio.Writer
	format Format
	lines  int
	buf    bytes.Buffer
}

// NewWriter returns a Writer of format f on w.
func NewWriter(w io.Writer, f Format) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), format: f}
}

// Lines returns the number of lines written so far.
func (w *Writer) Lines() int { return w.lines }

// Flush writes what is buffered to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

// Conversation writes the messages msgs yields as one line of the OpenAI
// format, {"messages":[…]}, each message as it comes (a conversation is
// never held whole). It writes nothing for a conversation without
// messages. An error of msgs is returned as it is, with the line left
// unfinished.
func (w *Writer) Conversation(msgs iter.Seq2[Message, error]) error {
	if w.format != OpenAI {
		return fmt.Errorf("export: %s writes validated turns, not conversations", w.format)
	}
	n := 0
	for m, err := range msgs {
		if err != nil {
			return err
		}
		if n == 0 {
			w.w.WriteString(`{"messages":[`)
		} else {
			w.w.WriteByte(',')
		}
		n++
		if err := w.message(m.Message, m.Weight); err != nil {
			return err
		}
	}
	if n == 0 {
		return nil
	}
	return w.endLine("]}")
}

// Turn writes the lines of a validated turn: in the pair formats one line
// per rejected answer, paired with the accepted one (none when there is
// no accepted answer or no rejected one); in TRLKTO one line per answer,
// the accepted one first (label true), then each rejected one (label
// false).
func (w *Writer) Turn(t Turn) error {
	switch w.format {
	case OpenAIPreference, TRLPreference:
		if t.Accepted == nil {
			return nil
		}
		for _, r := range t.Rejected {
			if err := w.pair(t.Prompt, *t.Accepted, r); err != nil {
				return err
			}
		}
		return nil
	case TRLKTO:
		if t.Accepted != nil {
			if err := w.kto(t.Prompt, *t.Accepted, true); err != nil {
				return err
			}
		}
		for _, r := range t.Rejected {
			if err := w.kto(t.Prompt, r, false); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("export: %s writes conversations, not validated turns", w.format)
}

// pair writes one preference line.
func (w *Writer) pair(prompt iter.Seq2[llm.Message, error], chosen, rejected llm.Message) error {
	open, chosenKey, rejectedKey, end := `{"prompt":`, `,"chosen":[`, `],"rejected":[`, "]}"
	if w.format == OpenAIPreference {
		open, chosenKey, rejectedKey, end = `{"input":{"messages":`, `},"preferred_output":[`, `],"non_preferred_output":[`, "]}"
	}
	w.w.WriteString(open)
	if err := w.messages(prompt); err != nil {
		return err
	}
	w.w.WriteString(chosenKey)
	if err := w.message(chosen, nil); err != nil {
		return err
	}
	w.w.WriteString(rejectedKey)
	if err := w.message(rejected, nil); err != nil {
		return err
	}
	return w.endLine(end)
}

// kto writes one line of the KTO format.
func (w *Writer) kto(prompt iter.Seq2[llm.Message, error], completion llm.Message, label bool) error {
	w.w.WriteString(`{"prompt":`)
	if err := w.messages(prompt); err != nil {
		return err
	}
	w.w.WriteString(`,"completion":[`)
	if err := w.message(completion, nil); err != nil {
		return err
	}
	return w.endLine(`],"label":` + strconv.FormatBool(label) + "}")
}

// messages writes the messages msgs yields as a JSON array.
func (w *Writer) messages(msgs iter.Seq2[llm.Message, error]) error {
	w.w.WriteByte('[')
	n := 0
	for m, err := range msgs {
		if err != nil {
			return err
		}
		if n > 0 {
			w.w.WriteByte(',')
		}
		n++
		if err := w.message(m, nil); err != nil {
			return err
		}
	}
	w.w.WriteByte(']')
	return nil
}

// message writes m as encoding/json marshals it, with "weight" added as
// its last field when weight is not nil.
func (w *Writer) message(m llm.Message, weight *int) error {
	w.buf.Reset()
	enc := json.NewEncoder(&w.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("export: encode a %s message: %w", m.Role, err)
	}
	b := bytes.TrimRight(w.buf.Bytes(), "\n")
	if weight != nil {
		if len(b) < 2 || b[len(b)-1] != '}' {
			return fmt.Errorf("export: a %s message does not encode as a JSON object", m.Role)
		}
		b = b[:len(b)-1]
		if len(b) > 1 { // not "{}": a field before
			b = append(b, ',')
		}
		b = append(b, `"weight":`...)
		b = strconv.AppendInt(b, int64(*weight), 10)
		b = append(b, '}')
	}
	_, err := w.w.Write(b)
	return err
}

// endLine writes end and the line's newline, and counts the line.
func (w *Writer) endLine(end string) error {
	w.w.WriteString(end)
	if err := w.w.WriteByte('\n'); err != nil {
		return err
	}
	w.lines++
	return nil
}
