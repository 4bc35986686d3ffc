package tract_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// readAll collects what ReadMessages yields from in: the contents before
// the first error, and that error.
func readAll(in io.Reader, opts ...tract.ReadOption) (contents []string, err error) {
	for m, e := range tract.ReadMessages(in, opts...) {
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
			require.ErrorIs(t, err, tract.ErrInvalidText)
			assert.EqualError(t, err, tc.err)
		})
	}
	t.Run("a valid surrogate pair is text", func(t *testing.T) {
		got, err := readAll(strings.NewReader(`{"role":"user","content":"\ud83d\ude80 \u00e9"}`))
		require.NoError(t, err)
		assert.Equal(t, []string{"🚀 é"}, got)
	})
}

// generated is a reader of head, then body repeated (for ever when
// times is negative), then tail, that never holds more than those three.
type generated struct {
	head, body, tail []byte
	times            int64
	read             int64 // bytes delivered
	state            []byte
}

func newGenerated(head, body, tail string, times int64) *generated {
	g := &generated{head: []byte(head), body: []byte(body), tail: []byte(tail), times: times}
	g.state = g.head
	return g
}

func (g *generated) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(g.state) == 0 {
			switch {
			case g.times != 0:
				g.state = g.body
				g.times--
			case g.tail != nil:
				g.state, g.tail = g.tail, nil
			default:
				g.read += int64(n)
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
		}
		c := copy(p[n:], g.state)
		g.state = g.state[c:]
		n += c
	}
	g.read += int64(n)
	return n, nil
}

// requireTooLarge requires err to wrap a *TooLargeError of limit which.
func requireTooLarge(t testing.TB, err error, which tract.SizeLimit) *tract.TooLargeError {
	t.Helper()
	var tl *tract.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, which, tl.Which)
	return tl
}

func TestReadMessages_Limits(t *testing.T) {
	lim := tract.Limits{MessageSize: 10, MetaSize: 20, LineSize: 100, InputSize: 1000}
	line := func(content, meta string) string {
		s := `{"role":"user","content":"` + content + `"`
		if meta != "" {
			s += `,"meta":` + meta
		}
		return s + "}\n"
	}
	for _, tc := range []struct {
		name  string
		in    string
		which tract.SizeLimit // "" when the input is within the limits
		err   string
	}{
		{"text at the limit", line("0123456789", ""), "", ""},
		{"text over the limit", line("ok", "") + line("0123456789a", ""), tract.LimitMessageSize,
			"message 2 (line 2): the text is 11 B, over the message size limit (10 B)"},
		{"escaped text is measured decoded", line(`\u00e9\u00e9\u00e9\u00e9\u00e9`, ""), "", ""},
		{"metadata at the limit", line("x", `{"k":"0123456789ab"}`), "", ""},
		{"metadata over the limit", line("x", `{"k":"0123456789abc"}`), tract.LimitMetaSize,
			"message 1 (line 1): the metadata is 21 B, over the metadata size limit (20 B)"},
		{"a line over the limit", line("x", "") + `{"role":"user","content":"x","meta":{"k":"` + strings.Repeat("a", 100) + `"}}`, tract.LimitLineSize,
			"message 2 (line 2): the line is more than 100 B, over the line size limit (100 B)"},
		{"an array element over the limit", `[{"role":"user","content":"x"},` + strings.Repeat(" ", 50) + `{"role":"user","content":"` + strings.Repeat("a", 100) + `"}]`, tract.LimitLineSize,
			"message 2 (line 1): the array element is more than 100 B, over the line size limit (100 B)"},
		{"input over the limit", strings.Repeat(line("x", ""), 40), tract.LimitInputSize,
			"message 34 (line 34): the input is more than 1000 B, over the input size limit (1000 B)"},
		{"input at the limit", strings.Repeat(line("x", ""), 33) + strings.Repeat(" ", 1000-33*30), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(strings.NewReader(tc.in), tract.ReadLimits(lim))
			if tc.which == "" {
				assert.NoError(t, err)
				return
			}
			requireTooLarge(t, err, tc.which)
			assert.ErrorContains(t, err, tc.err)
		})
	}
	t.Run("a line at the limit", func(t *testing.T) {
		in := `{"role":"user","content":"x","meta":{"k":"0123456789"}}`
		in += strings.Repeat(" ", 100-len(in)) + "\n"
		_, err := readAll(strings.NewReader(in), tract.ReadLimits(tract.Limits{LineSize: int64(len(in) - 1)}))
		assert.NoError(t, err, "white space after the object is not part of it")
		_, err = readAll(strings.NewReader(in), tract.ReadLimits(tract.Limits{LineSize: 54}))
		requireTooLarge(t, err, tract.LimitLineSize)
		_, err = readAll(strings.NewReader(in), tract.ReadLimits(tract.Limits{LineSize: 55}))
		assert.NoError(t, err)
	})
	t.Run("the line size follows the message size", func(t *testing.T) {
		// 4 × 10 + 1 MiB of metadata: a line of 2 MiB is too long.
		in := `{"role":"user","content":"x","meta":{"k":"` + strings.Repeat("a", 2<<20) + `"}}`
		_, err := readAll(strings.NewReader(in), tract.ReadLimits(tract.Limits{MessageSize: 10}))
		tl := requireTooLarge(t, err, tract.LimitLineSize)
		assert.Equal(t, int64(40+tract.DefaultMaxMetaSize), tl.Limit)
		assert.True(t, tl.More)
	})
}

// Whatever the input, ReadMessages stops once it has read what its limits
// allow: never more than the line size (for one message) or the input
// size, plus one buffer of 64 KiB. The default limits are tried on an
// endless line; the other shapes of input with small limits, which take
// the same paths faster. (BenchmarkReadMessages_Rejects measures the
// memory this takes.)
func TestReadMessages_StopsAtTheLimits(t *testing.T) {
	const slack = 64<<10 + 1
	defaultLine := 4*tract.DefaultMaxMessageSize + tract.DefaultMaxMetaSize
	small := []tract.ReadOption{tract.ReadLimits(tract.Limits{LineSize: 256 << 10, InputSize: 1 << 20})}
	x := strings.Repeat("x", 4096)
	for _, tc := range []struct {
		name     string
		in       *generated
		opts     []tract.ReadOption
		which    tract.SizeLimit
		readUpTo int64
	}{
		{"an endless line, default limits", newGenerated(`{"role":"user","content":"`, x, "", -1), nil, tract.LimitLineSize, defaultLine},
		{"an endless line", newGenerated(`{"role":"user","content":"`, x, "", -1), small, tract.LimitLineSize, 256 << 10},
		{"an endless line of escapes", newGenerated(`{"role":"user","content":"`, strings.Repeat(`\`, 2048), "", -1), small, tract.LimitLineSize, 256 << 10},
		{"an endless array element", newGenerated(`[{"role":"user","content":"ok"},{"role":"user","content":"`, x, "", -1), small, tract.LimitLineSize, 256<<10 + 60},
		{"endless nesting", newGenerated(`[`, strings.Repeat("[", 4096), "", -1), small, tract.LimitLineSize, 256<<10 + 1},
		{"an endless number", newGenerated(`[`, strings.Repeat("1", 4096), "", -1), small, tract.LimitLineSize, 256<<10 + 1},
		{"endless white space", newGenerated(``, strings.Repeat(" \n", 2048), "", -1), small, tract.LimitInputSize, 1 << 20},
		{"endless messages", newGenerated(``, "{\"role\":\"user\",\"content\":\"hi\"}\n", "", -1), small, tract.LimitInputSize, 1 << 20},
		{"an endless array", newGenerated(`[`, `{"role":"user","content":"hi"},`, "", -1), small, tract.LimitInputSize, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(tc.in, tc.opts...)
			requireTooLarge(t, err, tc.which)
			assert.LessOrEqual(t, tc.in.read, tc.readUpTo+slack, "bytes read")
		})
	}
}

// Import through ReadMessages is all or nothing at every limit, also when
// the input spans several batches (a pack) before the limit is reached.
func TestImportSeq_RejectedInputLeavesNothing(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	_, err := tr.User(ctx, "before")
	require.NoError(t, err)
	before := commitCount(t, tr)
	for _, tc := range []struct {
		name  string
		in    io.Reader
		which tract.SizeLimit
	}{
		{"endless messages", newGenerated(``, "{\"role\":\"user\",\"content\":\"hi\"}\n", "", -1), tract.LimitInputSize},
		{"a message too long after many", newGenerated(``, "{\"role\":\"user\",\"content\":\"hi\"}\n", `{"role":"user","content":"`+strings.Repeat("a", 4097)+`"}`, 5000), tract.LimitMessageSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := tract.ReadLimits(tract.Limits{MessageSize: 4096, InputSize: 512 << 10})
			_, err := tr.ImportSeq(ctx, tract.ReadMessages(tc.in, lim), small)
			requireTooLarge(t, err, tc.which)
			assert.Equal(t, before, commitCount(t, tr), "nothing was written")
			assert.Empty(t, unpublished(t, tr))
			msgs, err := tr.Compile(ctx)
			require.NoError(t, err)
			assert.Len(t, msgs, 1)
		})
	}
}

func TestTooLargeError(t *testing.T) {
	for _, tc := range []struct {
		err  tract.TooLargeError
		want string
	}{
		{tract.TooLargeError{What: "the text", Size: 50_000_000, Limit: 16 << 20, Which: tract.LimitMessageSize},
			"the text is 47.7 MiB (50000000 bytes), over the message size limit (16 MiB)"},
		{tract.TooLargeError{What: "the text", Size: 32 << 20, Limit: 16 << 20, Which: tract.LimitMessageSize},
			"the text is 32 MiB, over the message size limit (16 MiB)"},
		{tract.TooLargeError{What: "the line", Size: 65 << 20, More: true, Limit: 65 << 20, Which: tract.LimitLineSize},
			"the line is more than 65 MiB, over the line size limit (65 MiB)"},
	} {
		assert.Equal(t, tc.want, tc.err.Error())
	}
}
