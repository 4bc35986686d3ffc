package tract_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// Metadata under the keys tract reads back must have the type tract reads
// it as (package record checks the types); a value of another type is
// refused, whichever way it is given, and nothing is committed.
func TestCommit_MetaKeysTractReadsAreTypeChecked(t *testing.T) {
	tests := []struct {
		meta string
		want string // "" accepts
	}{
		{`{"pinned": true}`, ""},
		{`{"pinned": "yes"}`, `metadata "pinned" is a string ("yes"); tract reads it as a boolean (true or false)`},
		{`{"usage": {"prompt_tokens": "3"}}`, `metadata "usage": "prompt_tokens" is a string; tract reads it as a whole number`},
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
