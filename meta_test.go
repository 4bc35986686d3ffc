package tract_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// Metadata under the keys tract reads back must have the type tract reads
// it as; a value of another type is refused, whichever way it is given.
func TestCommit_MetaKeysTractReadsAreTypeChecked(t *testing.T) {
	tests := []struct {
		meta string
		want string // "" accepts
	}{
		{`{"pinned": true}`, ""},
		{`{"pinned": false}`, ""},
		{`{"pinned": "yes"}`, `metadata "pinned" is a string ("yes"); tract reads it as a boolean (true or false)`},
		{`{"pinned": 1}`, `metadata "pinned" is a number (1); tract reads it as a boolean (true or false)`},
		{`{"pinned": null}`, `metadata "pinned" is null; tract reads it as a boolean (true or false)`},
		{`{"pinned": [true]}`, `metadata "pinned" is an array; tract reads it as a boolean (true or false)`},
		{`{"valid": "true"}`, `metadata "valid" is a string ("true"); tract reads it as a boolean (true or false)`},
		{`{"attempt": 2}`, ""},
		{`{"attempt": "2"}`, `metadata "attempt" is a string ("2"); tract reads it as a whole number`},
		{`{"attempt": 1.5}`, `metadata "attempt" is a number (1.5); tract reads it as a whole number`},
		{`{"diagnosis": "too long"}`, ""},
		{`{"diagnosis": "` + strings.Repeat("é", 50) + `"}`, ""},
		{`{"pinned": "` + strings.Repeat("é", 50) + `"}`, `metadata "pinned" is a string ("` + strings.Repeat("é", 40) + `…"); tract reads`},
		{`{"diagnosis": 3}`, `metadata "diagnosis" is a number (3); tract reads it as a string`},
		{`{"validator_error": false}`, `metadata "validator_error" is a boolean (false); tract reads it as a string`},
		{`{"model": {"name": "x"}}`, `metadata "model" is an object; tract reads it as a string`},
		{`{"error": ["x"]}`, `metadata "error" is an array; tract reads it as a string`},
		{`{"usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}`, ""},
		{`{"usage": 7}`, `metadata "usage" is a number (7); tract reads it as an object`},
		{`{"usage": {"prompt_tokens": "3"}}`, `metadata "usage": "prompt_tokens" is a string; tract reads it as a whole number`},
		{`{"provenance": {"attempts": 2, "diagnoses": ["bad"], "model": "m"}}`, ""},
		{`{"provenance": {"restore": "` + strings.Repeat("ab", 32) + `"}}`, ""},
		{`{"provenance": {"attempts": 2, "diagnoses": "bad"}}`, `metadata "provenance": "diagnoses" is a string; tract reads it as an array`},
		{`{"provenance": {"usage": {"total_tokens": true}}}`, `metadata "provenance": "usage.total_tokens" is a boolean; tract reads it as a whole number`},
		{`{"provenance": {"restore": "abc"}}`, `metadata "provenance": "restore" is a string ("abc"); tract reads it as a full commit hash (64 hex characters)`},
		{`{"task": "03-01:task-3"}`, ""},
		{`{"task": 3}`, `metadata "task" is a number (3); tract reads it as a string`},
		{`{"failure": {"attempt": 1, "timestamp": "2026-03-01T12:00:00Z", "failure_type": "timeout", "error": "slow", "exit_code": 1}}`, ""},
		{`{"failure": "timeout"}`, `metadata "failure" is a string ("timeout"); tract reads it as an object`},
		{`{"failure": {"exit_code": "1"}}`, `metadata "failure": "exit_code" is a string; tract reads it as a whole number`},
		{`{"failure": {"timestamp": 5}}`, `metadata "failure": "timestamp" is a number (5); tract reads it as a time (an RFC 3339 string)`},
		{`{"failure": {"timestamp": "yesterday"}}`, `metadata "failure": "timestamp" is a string ("yesterday"); tract reads it as a time (an RFC 3339 string)`},
		{`{"failure": {"failure_type": ["timeout"]}}`, `metadata "failure": "failure_type" is an array; tract reads it as a string`},
		{`{"validators": ["json", "cmd:go test ./..."]}`, ""},
		{`{"validators": "json"}`, `metadata "validators" is a string ("json"); tract reads it as an array of strings`},
		{`{"validators": [1]}`, `metadata "validators" is an array; tract reads it as an array of strings`},
		{`{"weight": 0}`, ""},
		{`{"weight": 1}`, ""},
		{`{"weight": 0.5}`, `metadata "weight" is a number (0.5); tract reads it as 0 or 1`},
		{`{"weight": true}`, `metadata "weight" is a boolean (true); tract reads it as 0 or 1`},
		{`{"pinned": "x", "attempt": "y"}`, `metadata "attempt" is a string ("y")`},
		{`{"source": "anything", "n": [1, {"pinned": "nested keys are the caller's"}]}`, ""},
	}
	ctx := context.Background()
	tr := newTract(t)
	for _, tt := range tests {
		t.Run(tt.meta, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(tt.meta), &m))
			for name, commit := range map[string]func() error{
				"WithMetaJSON": func() error {
					_, err := tr.User(ctx, "x", tract.WithMetaJSON([]byte(tt.meta)))
					return err
				},
				"WithMeta": func() error {
					_, err := tr.User(ctx, "x", tract.WithMeta(m))
					return err
				},
				"CommitMany": func() error {
					_, err := tr.CommitMany(ctx, []tract.ImportMessage{
						{Role: tract.RoleUser, Content: "fine"}, {Role: tract.RoleUser, Content: "x", Meta: json.RawMessage(tt.meta)}})
					return err
				},
			} {
				before, err := tr.Status(ctx)
				require.NoError(t, err)

				err = commit()

				if tt.want == "" {
					assert.NoError(t, err, name)
					continue
				}
				var mte *tract.MetaTypeError
				if assert.ErrorAs(t, err, &mte, name) {
					assert.NotEmpty(t, mte.Key)
				}
				assert.ErrorIs(t, err, tract.ErrInvalidMeta, name)
				assert.ErrorContains(t, err, tt.want, name)
				after, err := tr.Status(ctx)
				require.NoError(t, err)
				assert.Equal(t, before.Head, after.Head, "%s: nothing committed", name)
			}
		})
	}
}
