package cmdrun

import (
	"errors"
	"fmt"
	"strings"
)

// ErrEmpty is returned by Split for a command line with no words.
var ErrEmpty = errors.New("no command")

// SplitError reports a command line Split cannot turn into argv without a
// shell: an unterminated quote, or a character only a shell gives a
// meaning to (a pipe, a redirection, a variable, a pattern).
type SplitError struct {
	// Offset is the byte offset of the character in the line.
	Offset int
	// Char is the character ("|", "$", "'"…).
	Char string
	// Msg says what is wrong with it.
	Msg string
}

// Error names the character, where it is and what is wrong with it.
func (e *SplitError) Error() string {
	return fmt.Sprintf("%s at byte %d: %s", quoteChar(e.Char), e.Offset, e.Msg)
}

func quoteChar(c string) string {
	if c == "'" {
		return `"'"`
	}
	return "'" + c + "'"
}

// shellOnly are the characters that mean something only to a shell:
// outside quotes Split refuses them rather than passing them on as
// arguments the user did not mean.
const shellOnly = "|&;<>()`$*"

// Split splits line into argv as a POSIX shell splits words, expanding
// nothing: words are separated by blanks; '…' keeps everything in it;
// "…" keeps everything but \" \\ \$ \` (and refuses $ and ` themselves,
// which a shell would expand); a backslash outside quotes keeps the next
// character. An unterminated quote, and outside quotes any of | & ; < > (
// ) ` $ * or a leading ~, are a *SplitError: they need a shell, which the
// caller runs as ["sh", "-c", "…"] when it wants one. A line with no
// words is ErrEmpty.
func Split(line string) ([]string, error) {
	var (
		argv   []string
		word   strings.Builder
		inWord bool
	)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				argv = append(argv, word.String())
				word.Reset()
				inWord = false
			}
		case c == '\\':
			if i+1 == len(line) {
				return nil, &SplitError{Offset: i, Char: `\`, Msg: "escapes nothing at the end of the command"}
			}
			i++
			word.WriteByte(line[i])
			inWord = true
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, &SplitError{Offset: i, Char: "'", Msg: "is not closed"}
			}
			word.WriteString(line[i+1 : i+1+end])
			i += 1 + end
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				switch line[j] {
				case '\\':
					if j+1 < len(line) && strings.IndexByte("\"\\$`", line[j+1]) >= 0 {
						j++
					}
				case '$', '`':
					return nil, &SplitError{Offset: j, Char: line[j : j+1], Msg: "would be expanded by a shell, and the command runs without one (escape it with \\ or use '…')"}
				}
				word.WriteByte(line[j])
			}
			if j == len(line) {
				return nil, &SplitError{Offset: i, Char: `"`, Msg: "is not closed"}
			}
			i = j
			inWord = true
		case strings.IndexByte(shellOnly, c) >= 0:
			return nil, &SplitError{Offset: i, Char: line[i : i+1], Msg: "means something only to a shell, and the command runs without one (quote it to pass it on)"}
		case c == '~' && !inWord:
			return nil, &SplitError{Offset: i, Char: "~", Msg: "is not expanded: the command runs without a shell (write the path in full)"}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		argv = append(argv, word.String())
	}
	if len(argv) == 0 {
		return nil, ErrEmpty
	}
	return argv, nil
}
