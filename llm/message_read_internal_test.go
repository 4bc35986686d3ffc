package llm

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/jsonscan"
)

// UnmarshalJSON reads a message's members in one pass; what it decodes,
// or the error it reports, is what decoding them from the map
// encoding/json makes gives: the last of a key wins, and the first key
// in order that is wrong is the one named.
func FuzzMessage_ReadAsAMap(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":"hi"}`, `{"role":"user","role":"assistant","content":"a\"b\u00e9"}`,
		`{"content":1,"content":"fine","x":{"b": [1, 2]}}`, `{"role":5,"name":""}`, `{"content":[{"type":"text","text":"t"}]}`,
		`{"content":[]}`, `{"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
		`null`, `[]`, `{"a":}`, ` {"role" : "user"} `, "{\"content\":\"\xff\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var got Message
		gotErr := got.UnmarshalJSON([]byte(in))
		var fields map[string]json.RawMessage
		if json.Unmarshal([]byte(in), &fields) != nil || fields == nil {
			_, isObject := jsonscan.Members([]byte(in))
			require.False(t, isObject, "%q", in)
			return // the same path as before: encoding/json's errors, or null
		}
		var ms []jsonscan.Member
		for k, v := range fields {
			ms = append(ms, jsonscan.Member{Key: k, Val: v})
		}
		want, wantErr := messageOf(ms)
		if wantErr != nil {
			require.Error(t, gotErr, "%q", in)
			assert.Equal(t, wantErr.Error(), gotErr.Error(), "%q", in)
			return
		}
		require.NoError(t, gotErr, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	})
}

// A decoded message keeps nothing of the bytes it was read from: a
// caller may reuse them (encoding/json's rule for UnmarshalJSON).
func TestMessage_KeepsNoneOfItsInput(t *testing.T) {
	in := []byte(`{"role":"user","content":"hello","name":"ann","x":{"a": [1]},"content":"hi"}`)
	var m Message
	require.NoError(t, m.UnmarshalJSON(in))
	for i := range in {
		in[i] = 'X'
	}
	assert.Equal(t, Message{Role: "user", Content: "hi", Name: "ann", Extra: map[string]json.RawMessage{"x": json.RawMessage(`{"a":[1]}`)}}, m)
}
