package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The documents these tests keep in step with the commands. The exit-code
// table of the README is generated.

var update = flag.Bool("update", false, "rewrite the README's generated exit-code table")

var (
	readmePath   = filepath.Join("..", "..", "README.md")
	exitCodesTag = regexp.MustCompile(`(?s)(<!-- exit-codes: [^\n]*-->\n)(.*?)(<!-- end exit-codes -->\n)`)
)

// The README's exit-code table is exitCodeTable, as 'tract help
// exit-codes' is: 'go test ./cmd/tract -run TestDocs_READMEExitCodes
// -update' regenerates it.
func TestDocs_READMEExitCodes(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	m := exitCodesTag.FindSubmatchIndex(data)
	require.NotNil(t, m, "README.md has no <!-- exit-codes: ... --> ... <!-- end exit-codes --> block")
	want := exitCodesMarkdown()
	if *update {
		out := append(append(slices.Clone(data[:m[4]]), want...), data[m[5]:]...)
		require.NoError(t, os.WriteFile(readmePath, out, 0o644))
		return
	}
	assert.Equal(t, want, string(data[m[4]:m[5]]),
		"README.md's exit-code table is not exitCodeTable: run 'go test ./cmd/tract -run TestDocs_READMEExitCodes -update'")
}
