package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
)

// Whatever a user feeds it, Message decodes or refuses without panicking,
// and what it decodes it writes back in a form that decodes to the same
// message and writes the same again.
func FuzzMessage(f *testing.F) {
	for _, tc := range messageCases {
		f.Add(tc.json)
	}
	f.Add(`{"role":"user","content":[{"type":"image_url","image_url":{"url":"x","detail":null}}]}`)
	f.Add(`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}","x":1}}]}`)
	f.Add(`{"content":[{"type":"file","file":{"file_id":"a","file_data":"b"}}],"x":{"b":1,"a":[]}}`)
	f.Fuzz(func(t *testing.T, in string) {
		var m llm.Message
		if json.Unmarshal([]byte(in), &m) != nil {
			return
		}
		out, err := m.MarshalJSON()
		require.NoError(t, err, "what decodes writes")
		var back llm.Message
		require.NoError(t, json.Unmarshal(out, &back), "%s", out)
		again, err := back.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again))
	})
}
