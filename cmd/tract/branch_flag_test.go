package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every command that works on a branch with --branch says the same of it,
// that HEAD in a revision then means the branch's tip (export's --branch,
// which selects what to export, is another flag).
func TestBranchFlag_OneHelpEverywhere(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	var with []string
	for _, cmd := range newRootCmd(f).Commands() {
		fl := cmd.Flags().Lookup("branch")
		if fl == nil || cmd.Name() == "export" {
			continue
		}
		with = append(with, cmd.Name())
		assert.Equal(t, branchFlagUsage, fl.Usage, cmd.Name())
	}
	assert.ElementsMatch(t, []string{"chat", "commit", "compress", "import", "reset", "status"}, with)
}
