package dag

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// canonicalCases are metadata the one-pass canonical form must write as
// encoding/json does, or refuse as it does.
var canonicalCases = []string{
	`{"b":1,"a":2}`, ` { "z" : [ 1 , 2 , { "y" : null , "x" : true } ] , "a" : "s" } `,
	`{"a":1,"a":2}`, `{"a":{"x":1},"a":{"y":2}}`, `{"n":-0.5e+10,"m":1E2,"k":0,"j":-0}`,
	`{"s":"\u00e9\n\t\/\"\\ \u0001 \u007f"}`, "{\"s\":\"\u2028 \u2029\"}", `{"s":"\u2028"}`,
	`{"<>&":"<b>&amp;</b>"}`, `{"é":1,"e":2,"E":3,"":4}`, `{"k\u0000":"v"}`, `{"a\"b":"c"}`,
	`{"e":{},"f":[],"g":[[],{}]}`, `{"emoji":"😀 \ud83d\ude00"}`, `{}`, ``, `  `,
	`{"d":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`,
	`{"d":` + strings.Repeat(`{"a":`, 20) + `1` + strings.Repeat("}", 20) + `}`,
	// refused, or read as encoding/json's Decoder reads them
	`[]`, `"a"`, `1`, `null`, `{"a":1} ]`, `{"a":1} x`, `{"a":1}{}`, `{"a":}`, `{"a":01}`,
	`{"s":"\ud800"}`, "{\"s\":\"\xff\"}", `{"a":1,}`,
}

// The one-pass canonical form is encoding/json's, byte for byte, and
// every error is encoding/json's.
func TestCanonicalMeta_AsEncodingJSONWrites(t *testing.T) {
	for _, in := range canonicalCases {
		checkCanonical(t, in)
	}
}

func FuzzCanonicalMeta_OnePassAsEncodingJSON(f *testing.F) {
	for _, in := range canonicalCases {
		f.Add(in)
	}
	f.Fuzz(checkCanonical)
}

func checkCanonical(t *testing.T, in string) {
	got, gotErr := CanonicalMeta([]byte(in))
	var want []byte
	var wantErr error
	switch {
	case strings.TrimSpace(in) == "": // nothing: CanonicalMeta says so first
	case InvalidJSONText([]byte(in)) < 0: // and it checks this before reading
		want, wantErr = canonicalMetaSlow([]byte(in))
	default:
		wantErr = gotErr
		require.Error(t, gotErr, "%q", in)
	}
	if wantErr != nil {
		require.Error(t, gotErr, "%q", in)
		assert.Equal(t, wantErr.Error(), gotErr.Error(), "%q", in)
		return
	}
	require.NoError(t, gotErr, "%q", in)
	assert.Equal(t, string(want), string(got), "%q", in)
}

// BenchmarkCanonicalMeta times the canonical form of an answer's
// metadata, in one pass and through encoding/json.
func BenchmarkCanonicalMeta(b *testing.B) {
	meta := []byte(`{"usage":{"total_tokens":57,"prompt_tokens":45,"completion_tokens":12},"model":"gpt-4o-mini",` +
		`"attempt":2,"valid":true,"duration_ms":812,"task":"t-3f2a","validators":["json","cmd:go test ./..."],` +
		`"provenance":{"attempts":2,"diagnoses":["line 1: want an object"],"restore":"` + strings.Repeat("ab", 32) + `"}}`)
	for _, bc := range []struct {
		name string
		f    func([]byte) ([]byte, error)
	}{{"one-pass", CanonicalMeta}, {"encoding-json", canonicalMetaSlow}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := bc.f(meta); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
