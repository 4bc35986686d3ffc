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

// parseOpenAI and parseAnthropic read a body as encoding/json reads it
// into a struct of their fields: keys matched case aside, the last of a
// key winning; and a body that is not one says why.
func TestParse_AsEncodingJSONReads(t *testing.T) {
	type openAI struct {
		Model               string          `json:"model"`
		Stream              bool            `json:"stream"`
		Messages            json.RawMessage `json:"messages"`
		Temperature         *float64        `json:"temperature"`
		MaxTokens           int             `json:"max_tokens"`
		MaxCompletionTokens int             `json:"max_completion_tokens"`
		StreamOptions       struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	for _, in := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"Model":"a","model":"b","STREAM":true,"messages":[1,2],"temperature":0.5,"max_tokens":10,"max_completion_tokens":20,"stream_options":{"include_usage":true}}`,
		`{"messages":[{"role":"user","content":"x"}],"messages":[{"role":"user","content":"y"},{"role":"assistant","content":"z"}],"extra":{"a":[1]}}`,
		`{"model":null,"temperature":null,"messages":["a"]}`,
	} {
		req, err := parseOpenAI([]byte(in))
		require.NoError(t, err, in)
		var want openAI
		require.NoError(t, json.Unmarshal([]byte(in), &want), in)
		assert.Equal(t, want.Model, req.Model, in)
		assert.Equal(t, want.Stream, req.Stream, in)
		assert.Equal(t, want.Temperature, req.Temperature, in)
		assert.Equal(t, max(want.MaxTokens, want.MaxCompletionTokens), req.MaxTokens, in)
		assert.Equal(t, want.StreamOptions.IncludeUsage, req.IncludeUsage, in)
		var elems []json.RawMessage
		require.NoError(t, json.Unmarshal(want.Messages, &elems))
		require.Len(t, req.elems, len(elems), in)
		for i := range elems {
			assert.Equal(t, string(elems[i]), string(req.elems[i].raw), in)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"model":"m",`, "the request body is not a chat-completions request: unexpected end of JSON input"},
		{`{"model":"m"} x`, "the request body is not a chat-completions request: invalid character 'x' after top-level value"},
		{`[{"role":"user"}]`, "the request body is not a chat-completions request: want a JSON object, not an array"},
		{`{"model":5,"messages":[1]}`, "the request body is not a chat-completions request: model: json: cannot unmarshal number into Go value of type string"},
		{`{"messages":"hi"}`, "the request body is not a chat-completions request: messages: want an array, not a string"},
		{`{"model":"m","messages":[]}`, "the request has no messages"},
		{`{"model":"m","messages":null}`, "the request has no messages"},
	} {
		_, err := parseOpenAI([]byte(c.in))
		assert.EqualError(t, err, c.want, c.in)
	}
	for _, c := range []struct{ in, want string }{
		{`{"model":"m","system":"be brief","messages":[{"role":"user","content":"hi"}]}`, ""},
		{`{"model":"m","system":null,"max_tokens":"8","messages":[]}`, "the request body is not a Messages API request: max_tokens: json: cannot unmarshal string into Go value of type int"},
		{`"hi"`, "the request body is not a Messages API request: want a JSON object, not a string"},
	} {
		req, err := parseAnthropic([]byte(c.in))
		if c.want != "" {
			assert.EqualError(t, err, c.want, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, "m", req.Model)
		require.Len(t, req.elems, 2)
		assert.Equal(t, elemAnthropicSystem, req.elems[0].kind)
		assert.Equal(t, `"be brief"`, string(req.elems[0].raw))
	}
}
