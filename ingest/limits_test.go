package ingest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/internal/testinput"
)

func TestReadMessages_Limits(t *testing.T) {
	lim := ingest.Limits{MessageSize: 10, MetaSize: 20, LineSize: 100, InputSize: 1000}
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
		which ingest.SizeLimit // "" when the input is within the limits
		err   string
	}{
		{"text at the limit", line("0123456789", ""), "", ""},
		{"text over the limit", line("ok", "") + line("0123456789a", ""), ingest.LimitMessageSize,
			"message 2 (line 2): the text is 11 B, over the message size limit (10 B)"},
		{"escaped text is measured decoded", line(`\u00e9\u00e9\u00e9\u00e9\u00e9`, ""), "", ""},
		{"metadata at the limit", line("x", `{"k":"0123456789ab"}`), "", ""},
		{"metadata over the limit", line("x", `{"k":"0123456789abc"}`), ingest.LimitMetaSize,
			"message 1 (line 1): the metadata is 21 B, over the metadata size limit (20 B)"},
		{"a line over the limit", line("x", "") + `{"role":"user","content":"x","meta":{"k":"` + strings.Repeat("a", 100) + `"}}`, ingest.LimitLineSize,
			"message 2 (line 2): the line is more than 100 B, over the line size limit (100 B)"},
		{"an array element over the limit", `[{"role":"user","content":"x"},` + strings.Repeat(" ", 50) + `{"role":"user","content":"` + strings.Repeat("a", 100) + `"}]`, ingest.LimitLineSize,
			"message 2 (line 1): the array element is more than 100 B, over the line size limit (100 B)"},
		{"input over the limit", strings.Repeat(line("x", ""), 40), ingest.LimitInputSize,
			"message 34 (line 34): the input is more than 1000 B, over the input size limit (1000 B)"},
		{"input at the limit", strings.Repeat(line("x", ""), 33) + strings.Repeat(" ", 1000-33*30), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(strings.NewReader(tc.in), ingest.ReadLimits(lim))
			if tc.which == "" {
				assert.NoError(t, err)
				return
			}
			testinput.RequireTooLarge(t, err, tc.which)
			assert.ErrorContains(t, err, tc.err)
		})
	}
	t.Run("a line at the limit", func(t *testing.T) {
		in := `{"role":"user","content":"x","meta":{"k":"0123456789"}}`
		in += strings.Repeat(" ", 100-len(in)) + "\n"
		_, err := readAll(strings.NewReader(in), ingest.ReadLimits(ingest.Limits{LineSize: int64(len(in) - 1)}))
		assert.NoError(t, err, "white space after the object is not part of it")
		_, err = readAll(strings.NewReader(in), ingest.ReadLimits(ingest.Limits{LineSize: 54}))
		testinput.RequireTooLarge(t, err, ingest.LimitLineSize)
		_, err = readAll(strings.NewReader(in), ingest.ReadLimits(ingest.Limits{LineSize: 55}))
		assert.NoError(t, err)
	})
	t.Run("the line size follows the message size", func(t *testing.T) {
		// 4 × 10 + 1 MiB of metadata: a line of 2 MiB is too long.
		in := `{"role":"user","content":"x","meta":{"k":"` + strings.Repeat("a", 2<<20) + `"}}`
		_, err := readAll(strings.NewReader(in), ingest.ReadLimits(ingest.Limits{MessageSize: 10}))
		tl := testinput.RequireTooLarge(t, err, ingest.LimitLineSize)
		assert.Equal(t, int64(40+ingest.DefaultMaxMetaSize), tl.Limit)
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
	defaultLine := 4*ingest.DefaultMaxMessageSize + ingest.DefaultMaxMetaSize
	small := []ingest.ReadOption{ingest.ReadLimits(ingest.Limits{LineSize: 256 << 10, InputSize: 1 << 20})}
	x := strings.Repeat("x", 4096)
	for _, tc := range []struct {
		name     string
		in       *testinput.Generated
		opts     []ingest.ReadOption
		which    ingest.SizeLimit
		readUpTo int64
	}{
		{"an endless line, default limits", testinput.NewGenerated(`{"role":"user","content":"`, x, "", -1), nil, ingest.LimitLineSize, defaultLine},
		{"an endless line", testinput.NewGenerated(`{"role":"user","content":"`, x, "", -1), small, ingest.LimitLineSize, 256 << 10},
		{"an endless line of escapes", testinput.NewGenerated(`{"role":"user","content":"`, strings.Repeat(`\`, 2048), "", -1), small, ingest.LimitLineSize, 256 << 10},
		{"an endless array element", testinput.NewGenerated(`[{"role":"user","content":"ok"},{"role":"user","content":"`, x, "", -1), small, ingest.LimitLineSize, 256<<10 + 60},
		{"endless nesting", testinput.NewGenerated(`[`, strings.Repeat("[", 4096), "", -1), small, ingest.LimitLineSize, 256<<10 + 1},
		{"an endless number", testinput.NewGenerated(`[`, strings.Repeat("1", 4096), "", -1), small, ingest.LimitLineSize, 256<<10 + 1},
		{"endless white space", testinput.NewGenerated(``, strings.Repeat(" \n", 2048), "", -1), small, ingest.LimitInputSize, 1 << 20},
		{"endless messages", testinput.NewGenerated(``, "{\"role\":\"user\",\"content\":\"hi\"}\n", "", -1), small, ingest.LimitInputSize, 1 << 20},
		{"an endless array", testinput.NewGenerated(`[`, `{"role":"user","content":"hi"},`, "", -1), small, ingest.LimitInputSize, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(tc.in, tc.opts...)
			testinput.RequireTooLarge(t, err, tc.which)
			assert.LessOrEqual(t, tc.in.Delivered, tc.readUpTo+slack, "bytes read")
		})
	}
}

func TestTooLargeError(t *testing.T) {
	for _, tc := range []struct {
		err  ingest.TooLargeError
		want string
	}{
		{ingest.TooLargeError{What: "the text", Size: 50_000_000, Limit: 16 << 20, Which: ingest.LimitMessageSize},
			"the text is 47.7 MiB (50000000 bytes), over the message size limit (16 MiB)"},
		{ingest.TooLargeError{What: "the text", Size: 32 << 20, Limit: 16 << 20, Which: ingest.LimitMessageSize},
			"the text is 32 MiB, over the message size limit (16 MiB)"},
		{ingest.TooLargeError{What: "the line", Size: 65 << 20, More: true, Limit: 65 << 20, Which: ingest.LimitLineSize},
			"the line is more than 65 MiB, over the line size limit (65 MiB)"},
	} {
		assert.Equal(t, tc.want, tc.err.Error())
	}
}
