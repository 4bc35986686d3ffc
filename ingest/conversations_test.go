package ingest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/ingest"
)

// readConversations collects the conversations of in up to the first
// error.
func readConversations(in string) ([]ingest.Conversation, error) {
	var out []ingest.Conversation
	for c, err := range ingest.ReadConversations(strings.NewReader(in)) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func TestReadConversations(t *testing.T) {
	in := `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"q"},{"role":"assistant","content":"a","weight":0}]}` + "\n\n" +
		`{"messages":[{"role":"user","content":"q2"},{"role":"assistant","content":"a2","meta":{"k":1},"weight":1}]}` + "\n"

	convs, err := readConversations(in)

	require.NoError(t, err)
	require.Len(t, convs, 2, "a blank line is skipped")
	first := convs[0].Messages
	require.Len(t, first, 3)
	assert.Equal(t, dag.RoleSystem, first[0].Role)
	assert.Nil(t, first[1].Meta)
	assert.JSONEq(t, `{"weight":0}`, string(first[2].Meta), "the weight is kept in the metadata")
	assert.JSONEq(t, `{"k":1,"weight":1}`, string(convs[1].Messages[1].Meta))
}

func TestReadConversations_Errors(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"not JSON", "{\"messages\":[]}\nnope\n", `line 1: no messages`},
		{"unknown field", `{"messages":[{"role":"user","content":"a"}],"tools":[]}`, `line 1: field "tools" is not supported`},
		{"bad weight", `{"messages":[{"role":"assistant","content":"a","weight":2}]}`, `line 1: message 1: "weight" is a number (2); it is 0 or 1`},
		{"weight given twice", `{"messages":[{"role":"assistant","content":"a","weight":1,"meta":{"weight":0}}]}`, `line 1: message 1: metadata must be a JSON object: "weight" given twice, as the message's "weight" and in its metadata`},
		{"bad role", "\n" + `{"messages":[{"role":"user","content":"a"},{"role":"robot","content":"b"}]}`, `line 2: message 2: invalid role "robot"`},
		{"not an object", `[1]`, `line 1: not a JSON object {"messages":[…]}`},
		{"messages not an array", `{"messages":{}}`, `line 1: "messages" is not an array of messages`},
		{"no messages key", `{}`, `line 1: no messages`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readConversations(tt.in)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}
