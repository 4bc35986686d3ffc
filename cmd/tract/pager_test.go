package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A pager line of words runs directly, so that tract waits for (and on a
// second Ctrl-C stops) the pager itself; shell syntax, and an assignment
// in front, need the shell.
func TestPagerArgs(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"less", []string{"less"}},
		{"less -FRX", []string{"less", "-FRX"}},
		{"  bat\t--paging=always  ", []string{"bat", "--paging=always"}},
		{"/usr/bin/most -s", []string{"/usr/bin/most", "-s"}},
		{"LESS=R less", nil},
		{"less | cat", nil},
		{"less -R; echo done", nil},
		{`"my pager" -x`, nil},
		{"$PAGER", nil},
		{"~/bin/pager", nil},
		{"less *.txt", nil},
		{"less\necho", nil},
		{"", nil},
	} {
		assert.Equal(t, tc.want, pagerArgs(tc.line), "%q", tc.line)
	}
}
