package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// indented encodes v as the CLI's --json does for a whole value.
func indented(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetIndent("", "  ")
	e.SetEscapeHTML(false)
	require.NoError(t, e.Encode(v))
	return b.String()
}

// log, log --all and compile write their JSON as they read the history, a
// page at a time; what they write is, byte for byte, the JSON of the
// whole value the API returns.
func TestJSON_StreamedEqualsWhole(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t)
	db := s.initRepo()
	api := openAPI(t, db)
	check := func(when string) {
		t.Helper()
		log, err := api.Log(ctx)
		require.NoError(t, err)
		if log == nil {
			log = []*tract.CommitInfo{}
		}
		first := tract.History{Commits: log, Orphans: []*tract.OrphanChain{}}
		assert.Equal(t, indented(t, first), s.ok("log", "--json").Stdout, when)
		all, err := api.LogAll(ctx)
		require.NoError(t, err)
		assert.Equal(t, indented(t, all), s.ok("log", "--all", "--json").Stdout, when)
		msgs, err := api.Compile(ctx)
		require.NoError(t, err)
		if msgs == nil {
			assert.Equal(t, "[]\n", s.ok("compile", "--json").Stdout, when)
		} else {
			assert.Equal(t, indented(t, msgs), s.ok("compile", "--json").Stdout, when)
		}
	}
	check("an empty repository")
	s.commit("system", "Answer <in> JSON & \"quotes\".")
	check("one commit")
	s.importMessages(700, func(i int) string { return fmt.Sprintf("message %d\nwith a second line", i) })
	s.commit("user", "to be orphaned")
	s.ok("reset", "--soft", "HEAD~1")
	s.ok("branch", "side", "HEAD~300")
	check("pages of history, an orphan chain, a branch")
	assert.Contains(t, s.ok("log", "--all", "--oneline").Stdout, "|/  orphaned by reset")
}
