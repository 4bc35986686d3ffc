package main

import (
	"strings"
	"testing"
)

// Several -m are joined as paragraphs, as git commit joins them.
func TestNewCmdCommit_Flags(t *testing.T) {
	cases := []struct {
		args    []string
		want    CommitOptions
		wantErr string
	}{
		{args: []string{"--role", "user"}, want: CommitOptions{Role: "user", Kind: "message"}},
		{args: []string{"--role", "user", "-m", "a"}, want: CommitOptions{Role: "user", Kind: "message", Message: "a", MessageSet: true}},
		{args: []string{"--role", "user", "-m", "a", "-m", "b"}, want: CommitOptions{Role: "user", Kind: "message", Message: "a\n\nb", MessageSet: true}},
		{args: []string{"-r", "user", "-m", "a,b", "--message", "c\nd", "-m", "e"}, want: CommitOptions{Role: "user", Kind: "message", Message: "a,b\n\nc\nd\n\ne", MessageSet: true}},
		{args: []string{"--role", "user", "-m", "-"}, want: CommitOptions{Role: "user", Kind: "message", Message: "-", MessageSet: true}},
		{args: []string{"--role", "user", "-m", "a", "-m", "-"}, wantErr: "cannot be joined with another -m"},
		{args: []string{"--role", "user", "-m", "a", "-"}, wantErr: `unexpected argument "-"`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			checkParse(t, newCmdCommit, tc.args, tc.want, tc.wantErr)
		})
	}
}
