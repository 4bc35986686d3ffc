package cmdrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"wc -w", []string{"wc", "-w"}},
		{"  jq   -r\t.input\n", []string{"jq", "-r", ".input"}},
		{`sh -c 'jq -r .q | tr a-z A-Z'`, []string{"sh", "-c", "jq -r .q | tr a-z A-Z"}},
		{`grep "a b" 'c"d' e\ f`, []string{"grep", "a b", `c"d`, "e f"}},
		{`echo "x \"y\" \$HOME \\ \n"`, []string{"echo", `x "y" $HOME \ \n`}},
		{`printf '' x`, []string{"printf", "", "x"}},
		{`a'b'"c"d`, []string{"abcd"}},
		{`./bin/lookup --db=x.db a~b ? [x]`, []string{"./bin/lookup", "--db=x.db", "a~b", "?", "[x]"}},
		{`echo \| \$x`, []string{"echo", "|", "$x"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, err := Split(tt.line)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSplit_Refused(t *testing.T) {
	tests := []struct {
		line, want string
	}{
		{"jq .q | tr a-z A-Z", `'|' at byte 6: means something only to a shell, and the command runs without one (quote it to pass it on)`},
		{"cat > out", `'>' at byte 4: means something only to a shell`},
		{"echo $HOME", `'$' at byte 5: means something only to a shell`},
		{"ls *.go", `'*' at byte 3: means something`},
		{"a; b", `';' at byte 1`},
		{"a && b", `'&' at byte 2`},
		{"echo `date`", "'`' at byte 5"},
		{`echo "$HOME"`, `'$' at byte 6: would be expanded by a shell`},
		{"~/bin/x", `'~' at byte 0: is not expanded`},
		{"echo 'open", `"'" at byte 5: is not closed`},
		{`echo "open`, `'"' at byte 5: is not closed`},
		{`echo \`, `'\' at byte 5: escapes nothing`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			_, err := Split(tt.line)
			var se *SplitError
			require.ErrorAs(t, err, &se)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	for _, line := range []string{"", "  \t\n"} {
		_, err := Split(line)
		assert.ErrorIs(t, err, ErrEmpty, "%q", line)
	}
}

func TestHead_KeepsWholeCharacters(t *testing.T) {
	b := &Head{Limit: 4}
	n, err := b.Write([]byte("abcé€"))
	require.NoError(t, err)
	assert.Equal(t, 8, n)
	assert.Equal(t, "abc", string(b.Bytes()), "é would be cut in half")
	assert.Equal(t, 5, b.Dropped())
	_, _ = b.Write([]byte("more"))
	assert.Equal(t, 9, b.Dropped())
}

func TestTail_LastLines(t *testing.T) {
	b := &Tail{Limit: 12}
	_, _ = b.Write([]byte("one\ntwo\nthree\nfour  \n\n"))
	assert.Equal(t, "ree\nfour", b.LastLines(5))
	assert.Equal(t, "four", b.LastLines(1))
}
