package serve

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// splitArray gives the elements encoding/json gives, byte for byte.
func TestSplitArray(t *testing.T) {
	for _, in := range []string{
		`[]`, ` [ ] `, `[1]`, `[ 1 , 2 ]`, `[null,true,false,-1.5e3]`,
		`[{"role":"user","content":"a, b ] } ["}, {"x":[1,[2,{}]]}]`,
		`["\"quoted\", [not] {an} array\\", "\\"]`,
		"[\n\t{\"a\": \"\\u005d\"}\r\n,\n\"é ✓\"\n]",
		`[[],{},"",[[]]]`,
	} {
		var want []json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(in), &want), in)
		got := splitArray([]byte(in))
		require.Len(t, got, len(want), in)
		for i := range want {
			assert.Equal(t, string(want[i]), string(got[i]), in)
		}
	}
}

func FuzzSplitArray(f *testing.F) {
	for _, s := range []string{`[]`, `[1, "a,]", {"b": [2, 3]}]`, `["\\", "\""]`, " [ {} , [] ] "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var want []json.RawMessage
		if json.Unmarshal([]byte(in), &want) != nil || want == nil {
			return // not an array
		}
		var doc struct {
			M rawMessages `json:"m"`
		}
		require.NoError(t, json.Unmarshal([]byte(`{"m":`+in+`}`), &doc))
		require.Len(t, doc.M, len(want), in)
		for i := range want {
			assert.Equal(t, string(want[i]), string(doc.M[i]), in)
		}
	})
}

func TestHasTools(t *testing.T) {
	for in, want := range map[string]bool{``: false, `null`: false, `[]`: false, ` [ ] `: false,
		`[{"type":"function"}]`: true, `{}`: true} {
		assert.Equal(t, want, hasTools(rawValue(in)), in)
	}
}
