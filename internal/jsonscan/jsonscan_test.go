package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Members accepts exactly the objects json.Valid accepts, and gives
// their members as encoding/json reads them into a map (the last of a
// key winning).
func TestMembers(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	for _, in := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a" : [1, {"b": null}] , "c":"d"}`, "{\n\t\"a\": true,\r\n\"b\": false}",
		`{"a":-0.5e+10,"b":0,"c":1E2,"d":-1.25}`, `{"a\"b":"\u00e9\n\/"}`, `{"a":1,"a":2}`, `{"é ✓":"x"}`,
		`{"a":` + deep[1:len(deep)-1] + `}`, `{"a":` + deep + `}`,
		// not valid JSON, or not an object
		``, ` `, `[]`, `"a"`, `1`, `null`, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{"a":1}}`, `{"a":1} x`,
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":+1}`, `{"a":tru}`, `{"a":nul}`, `{"a":True}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, "{\"a\":\"\x01\"}", `{"a":"b}`, `{'a':1}`, `{a:1}`,
		`{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`, `{"a":{"b" 1}}`,
	} {
		checkMembers(t, in)
	}
	_, ok := Members([]byte(`{"a":` + deep + `}`))
	assert.False(t, ok, "nested deeper than encoding/json lets")
}

// A member whose value is an array comes with its elements, as
// encoding/json splits them.
func TestMembers_ArrayElements(t *testing.T) {
	ms, ok := Members([]byte(`{"a": [ 1 , "x]" , {"b":[2]} ], "b": {"c": [3]}}`))
	require.True(t, ok)
	require.Len(t, ms, 2)
	var want []json.RawMessage
	require.NoError(t, json.Unmarshal(ms[0].Val, &want))
	assert.Equal(t, want, ms[0].Elems)
	assert.Nil(t, ms[1].Elems, "an object's arrays are not split")
}

// Elements accepts exactly the arrays json.Valid accepts, and splits
// them as encoding/json does.
func TestElements(t *testing.T) {
	for _, in := range []string{
		`[]`, ` [ ] `, `[1]`, `[ 1 , "a,]" , {"b": [2, 3]} ]`, `[["\\", "\""], null, true, -0.5]`,
		``, `{}`, `[`, `[1,]`, `[1] x`, `[1]]`, `"a"`,
	} {
		got, ok := Elements([]byte(in))
		var want []json.RawMessage
		valid := json.Unmarshal([]byte(in), &want) == nil && want != nil
		require.Equal(t, valid, ok, "%q", in)
		if valid {
			assert.Equal(t, len(want), len(got), in)
			for i := range want {
				assert.Equal(t, string(want[i]), string(got[i]), in)
			}
		}
	}
}

func TestUnquote(t *testing.T) {
	for _, q := range []string{`""`, `"a"`, `"é ✓"`, `"a\"b\\c\/d\n\u00e9\ud83d\ude00"`, "\"\xff\"", `"\ud800"`} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(q), &want), q)
		got, ok := Unquote([]byte(q))
		assert.True(t, ok, q)
		assert.Equal(t, want, got, q)
	}
}

func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"\u00e9"}],"a":-1.5e3}`, ` {"m":"x\"y"} `, `{"a":01}`, `[1]`} {
		f.Add(s)
	}
	f.Fuzz(checkMembers)
}

// checkMembers checks Members against encoding/json on in.
func checkMembers(t *testing.T, in string) {
	ms, ok := Members([]byte(in))
	var want map[string]json.RawMessage
	valid := json.Unmarshal([]byte(in), &want) == nil && want != nil
	require.Equal(t, valid, ok, "%.80q", in)
	if ok {
		assert.Equal(t, want, asMap(ms), in)
	}
}

// asMap returns ms as encoding/json reads them into a map.
func asMap(ms []Member) map[string]json.RawMessage {
	got := map[string]json.RawMessage{}
	for _, m := range ms {
		got[m.Key] = m.Val
	}
	return got
}
