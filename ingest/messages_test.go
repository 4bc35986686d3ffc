package ingest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/internal/fuzzcheck"
	"github.com/tractdag/tract/internal/testinput"
)

// readAll collects what ReadMessages yields from in: the contents before
// the first error, and that error.
func readAll(in io.Reader, opts ...ingest.ReadOption) (contents []string, err error) {
	for m, e := range ingest.ReadMessages(in, opts...) {
		if e != nil {
			return contents, e
		}
		contents = append(contents, m.Content)
	}
	return contents, nil
}

func TestReadMessages(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // contents
		err      string
	}{
		{"array", `[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]`, []string{"a", "b"}, ""},
		{"lines", "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"user\",\"content\":\"b\"}\n", []string{"a", "b"}, ""},
		{"lines without a final newline", "{\"role\":\"user\",\"content\":\"a\"}\r\n{\"role\":\"user\",\"content\":\"b\"}", []string{"a", "b"}, ""},
		{"objects over several lines", "{\n  \"role\": \"user\",\n  \"content\": \"a\"\n}\n{\n  \"role\": \"user\",\n  \"content\": \"b\"\n}\n", []string{"a", "b"}, ""},
		{"objects on one line", `{"role":"user","content":"a"}{"role":"user","content":"b"}`, []string{"a", "b"}, ""},
		{"brackets and quotes in strings", `[{"role":"user","content":"} ] \" { [ \\","meta":{"k":["]"]}}]`, []string{`} ] " { [ \`}, ""},
		{"empty", "", nil, ""},
		{"white space", " \n\t", nil, ""},
		{"empty array", " [ ] ", nil, ""},
		{"empty array over lines", "[\n]\n", nil, ""},
		{"not JSON", "hello", nil, "message 1 (line 1): not a JSON object"},
		{"a number", "[1]", nil, "message 1 (line 1): not a JSON object"},
		{"null", "{\"role\":\"user\",\"content\":\"a\"}\nnull\n", []string{"a"}, "message 2 (line 2): not a JSON object with role and content: got null"},
		{"a stray bracket", "}", nil, "message 1 (line 1): not a JSON object"},
		{"an unknown role", "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"robot\",\"content\":\"b\"}\n", []string{"a"}, "message 2 (line 2): invalid role \"robot\""},
		{"an unknown kind", "[{\"role\":\"user\",\"content\":\"a\"},\n{\"role\":\"user\",\"kind\":\"poem\",\"content\":\"b\"}]", []string{"a"}, "message 2 (line 2): invalid kind \"poem\""},
		{"a bad object in the middle", `[{"role":"user","content":"a"},{"role":1}]`, []string{"a"}, "message 2 (line 1)"},
		{"a bad line", "{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\":\"user\",\"content\":}\n", []string{"a"}, "message 2 (line 3): not a JSON object"},
		{"a cut line", "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"user\",\"con", []string{"a"}, "message 2 (line 2): not a JSON object with role and content: unexpected end of JSON input"},
		{"an unfinished array", `[{"role":"user","content":"a"}`, []string{"a"}, "not a JSON array of messages: it ends without ]"},
		{"only a bracket", `[`, nil, "not a JSON array of messages: it ends without ]"},
		{"a missing comma", `[{"role":"user","content":"a"} {"role":"user","content":"b"}]`, []string{"a"}, "expected , or ] after message 1"},
		{"a trailing comma", `[{"role":"user","content":"a"},]`, []string{"a"}, "message 2 (line 1): not a JSON object"},
		{"trailing data", `[{"role":"user","content":"a"}] x`, []string{"a"}, "trailing data after the messages: unexpected 'x' at byte offset 32 (line 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(strings.NewReader(tc.in))
			assert.Equal(t, tc.want, got)
			if tc.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.err)
			}
		})
	}
	t.Run("a failing reader", func(t *testing.T) {
		for _, in := range []string{`[{"role":"user","content":"a"},`, `{"role":"user","content":"a"}`, `{"role":"us`} {
			_, err := readAll(io.MultiReader(strings.NewReader(in), iotestErr{}))
			assert.ErrorContains(t, err, "read input: disk on fire", in)
		}
	})
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, fmt.Errorf("disk on fire") }

// Import rejects text that is not UTF-8 as Commit does, where
// encoding/json would have replaced it with U+FFFD: the error gives the
// message, its line and the byte offset in the input.
func TestReadMessages_InvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
	}{
		{"a bad byte on a line", "{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"user\",\"content\":\"a\xffb\"}\n",
			"message 2 (line 2): invalid text: not valid UTF-8 at byte offset 58 of the input"},
		{"a lone surrogate escape on a line", "{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"user\",\"content\":\"a\\ud800b\"}\n",
			"message 2 (line 2): invalid text: the escape \\ud800 is half of a UTF-16 surrogate pair, not a character, at byte offset 58 of the input"},
		{"a bad byte in an array element", "[{\"role\":\"user\",\"content\":\"ok\"},\n {\"role\":\"user\",\"content\":\"\xc3\"}]",
			"message 2 (line 2): invalid text: not valid UTF-8 at byte offset 60 of the input"},
		{"a lone low surrogate in an array element", `[{"role":"user","content":"ok"},{"role":"user","content":"\udc00"}]`,
			"message 2 (line 1): invalid text: the escape \\udc00 is half of a UTF-16 surrogate pair, not a character, at byte offset 58 of the input"},
		{"a lone surrogate in metadata", `{"role":"user","content":"ok","meta":{"k":"\ud83d"}}`,
			"message 1 (line 1): invalid text: the escape \\ud83d is half of a UTF-16 surrogate pair, not a character, at byte offset 43 of the input"},
		{"on a later line of the object", "{\"role\": \"user\",\n \"content\": \"\xff\"}",
			"message 1 (line 1): invalid text: not valid UTF-8 at byte offset 30 of the input, on line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(strings.NewReader(tc.in))
			assert.Len(t, got, strings.Count(tc.err, "message 2"))
			require.ErrorIs(t, err, dag.ErrInvalidText)
			assert.EqualError(t, err, tc.err)
		})
	}
	t.Run("a valid surrogate pair is text", func(t *testing.T) {
		got, err := readAll(strings.NewReader(`{"role":"user","content":"\ud83d\ude80 \u00e9"}`))
		require.NoError(t, err)
		assert.Equal(t, []string{"🚀 é"}, got)
	})
}

func FuzzReadMessages(f *testing.F) {
	for _, s := range []string{
		`[{"role":"user","content":"a"},{"role":"assistant","content":"b","kind":"note","meta":{"k": [1, 2]}}]`,
		"{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"user\",\"content\":\"b\"}\n",
		"", " \n\t", " [ ] ", "hello", `[{"role":"user","content":"a"},{"role":"user"]`,
		`[{"role":"user","content":"a"}`, `[{"role":"user","content":"a"}] x`, `{"role":"user","content":"\u00e9\ud800"}`,
		"null", "[null]", `{"role":"user","content":"a"} true`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}],"refusal":null,"meta":{"k":1}}`,
		`[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:,x","detail":"low"}}],"name":"n"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		msgs, err := testinput.Collect(ingest.ReadMessages(bytes.NewReader(in)))
		if err != nil {
			fuzzcheck.UserError(t, err)
			return
		}
		// What was read is one JSON object per message: an array of them,
		// or a stream of them.
		values, verr := topLevelValues(in)
		if verr != nil {
			t.Fatalf("read %d messages from input that is not JSON values (%v): %q", len(msgs), verr, in)
		}
		if len(values) != len(msgs) {
			t.Fatalf("read %d messages from %d values: %q", len(msgs), len(values), in)
		}
		for i, v := range values {
			if v[0] != '{' {
				t.Fatalf("message %d read from %s, which is not an object", i+1, v)
			}
		}
		// The messages come back alike from both forms ReadMessages takes.
		var array, lines bytes.Buffer
		require.NoError(t, json.NewEncoder(&array).Encode(append([]ingest.Message{}, msgs...)))
		for _, m := range msgs {
			require.NoError(t, json.NewEncoder(&lines).Encode(m))
		}
		for _, form := range []*bytes.Buffer{&array, &lines} {
			again, err := testinput.Collect(ingest.ReadMessages(bytes.NewReader(form.Bytes())))
			if err != nil {
				t.Fatalf("re-encoded messages do not read back: %v\n%s", err, form)
			}
			if !reflect.DeepEqual(compactMeta(t, msgs), compactMeta(t, again)) {
				t.Fatalf("messages %+v read back as %+v from\n%s", msgs, again, form)
			}
		}
	})
}

// topLevelValues returns the elements of a JSON array, or the values of a
// stream of JSON values.
func topLevelValues(in []byte) ([]json.RawMessage, error) {
	if t := bytes.TrimSpace(in); len(t) > 0 && t[0] == '[' {
		var vs []json.RawMessage
		err := json.Unmarshal(in, &vs)
		return vs, err
	}
	var vs []json.RawMessage
	d := json.NewDecoder(bytes.NewReader(in))
	for {
		var v json.RawMessage
		if err := d.Decode(&v); err == io.EOF {
			return vs, nil
		} else if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
}

// compactMeta returns msgs with their metadata and their other members'
// values in one spelling (see sameJSON), which encoding them may change.
func compactMeta(t *testing.T, msgs []ingest.Message) []ingest.Message {
	out := slices.Clone(msgs)
	for i := range out {
		if out[i].Meta != nil {
			out[i].Meta = sameJSON(t, out[i].Meta)
		}
		if out[i].Extra != nil {
			extra := make(map[string]json.RawMessage, len(out[i].Extra))
			for k, v := range out[i].Extra {
				extra[k] = sameJSON(t, v)
			}
			out[i].Extra = extra
		}
	}
	return out
}

// sameJSON returns raw in one spelling of its value: encoding it again
// escapes what it escapes ("&" as "\u0026") and spaces it as it does.
func sameJSON(t *testing.T, raw json.RawMessage) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
