package dag_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

// Header.Shaped tells Compile which commits to read whole: every commit
// with a shape, and no plain one.
func TestDecodeHeader_Shaped(t *testing.T) {
	for _, tc := range []struct {
		meta   string
		shaped bool
	}{
		{"", false},
		{`{"model":"m"}`, false},
		{`{"shape":{"name":"alice"}}`, true},
		{`{"attempt":1,"shape":{"content":null,"tool_calls":[]}}`, true},
		{`{"note":"the shape of things"}`, false},
	} {
		c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blobOf("x"), Time: fixedTime}
		if tc.meta != "" {
			meta, err := dag.CanonicalMeta([]byte(tc.meta))
			require.NoError(t, err)
			c.Meta = meta
		}
		raw, err := dag.Encode(c)
		require.NoError(t, err)
		hd, err := dag.DecodeHeader(raw)
		require.NoError(t, err)
		assert.Equal(t, tc.shaped, hd.Shaped, tc.meta)
		assert.Equal(t, dag.Header{Kind: c.Kind, Role: c.Role, Blob: c.Blob, Shaped: tc.shaped}, hd)
	}
}
