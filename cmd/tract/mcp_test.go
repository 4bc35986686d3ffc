package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

func TestMCP_Flags(t *testing.T) {
	tests := []struct {
		args    []string
		want    MCPOptions
		wantErr string
	}{
		{nil, MCPOptions{}, ""},
		{[]string{"--read-only"}, MCPOptions{ReadOnly: true}, ""},
		{[]string{"extra"}, MCPOptions{}, "takes no arguments"},
	}
	for _, tt := range tests {
		checkParse(t, newCmdMCP, tt.args, tt.want, tt.wantErr)
	}
}

// tract mcp answers each message as it comes, while standard input stays
// open (its standard output is otherwise buffered until the command
// ends), and ends when the client closes standard input.
func TestMCP_AnswersOverStdio(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "read-write", true: "read-only"}[readOnly], func(t *testing.T) {
			f, _, errOut := testFactory(t, nil)
			f.DBFlag = filepath.Join(t.TempDir(), "tract.db")
			tr, err := tract.Init(f.DBFlag)
			require.NoError(t, err)
			_, err = tr.User(context.Background(), "hello")
			require.NoError(t, err)
			require.NoError(t, tr.Close())

			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			f.IO.In = inR
			buffered := bufio.NewWriterSize(outW, 64<<10) // as run buffers standard output
			f.IO.Out = buffered
			done := make(chan error, 1)
			go func() { done <- mcpRun(context.Background(), &MCPOptions{Factory: f, ReadOnly: readOnly}) }()

			lines := bufio.NewScanner(outR)
			lines.Buffer(make([]byte, 1<<20), 1<<20)
			next := make(chan string)
			go func() {
				for lines.Scan() {
					next <- lines.Text()
				}
				close(next)
			}()
			ask := func(msg string) map[string]any {
				t.Helper()
				_, err := io.WriteString(inW, msg+"\n")
				require.NoError(t, err)
				select {
				case line := <-next:
					var v map[string]any
					require.NoError(t, json.Unmarshal([]byte(line), &v), line)
					return v
				case <-time.After(10 * time.Second):
					t.Fatal("no answer while standard input is open")
				}
				return nil
			}
			init := ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			assert.Equal(t, "tract", init["result"].(map[string]any)["serverInfo"].(map[string]any)["name"])
			_, err = io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			require.NoError(t, err)
			list := ask(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			var names []string
			for _, tl := range list["result"].(map[string]any)["tools"].([]any) {
				names = append(names, tl.(map[string]any)["name"].(string))
			}
			assert.Equal(t, !readOnly, slices.Contains(names, "reset"), "%v", names)
			assert.Contains(t, names, "log")

			require.NoError(t, inW.Close())
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("tract mcp did not end when standard input closed")
			}
			assert.Contains(t, errOut.String(), "tract mcp: serving "+f.DBFlag+" over stdio")
		})
	}
}
