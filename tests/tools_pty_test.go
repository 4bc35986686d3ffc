//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --approve-tools asks at the terminal before each run: "n" runs nothing
// and tells the model the user declined; "a" runs this call and the next
// without asking again.
func TestChat_ApproveToolsOnATerminal(t *testing.T) {
	t.Parallel()
	twoCalls := func(t *testing.T) *toolServer {
		return newToolServer(t,
			toolReply{Calls: []toolCall{{ID: "call_1", Name: "lookup", Args: `{"input":"x"}`}}},
			toolReply{Calls: []toolCall{{ID: "call_2", Name: "lookup", Args: `{"input":"z"}`}}},
			toolReply{Content: "done"},
		)
	}
	t.Run("no", func(t *testing.T) {
		t.Parallel()
		ts := twoCalls(t)
		s := ts.env(newSandbox(t))
		s.initRepo()
		writeScript(t, s, "lookup.sh", lookupScript)
		p := s.startPTY("chat", "--tool", "lookup=./lookup.sh", "--approve-tools", "What is x?")
		p.waitFor(`run tool lookup({"input":"x"})? [y]es, [N]o, [a]lways: `)
		p.send("n\r")
		p.waitFor(`run tool lookup({"input":"z"})? [y]es, [N]o, [a]lways: `)
		p.send("\r") // Enter: no
		assert.Equal(t, exitOK, p.exit())
		out := p.finalOutput()
		assert.Contains(t, out, `tool: lookup({"input":"x"}) → error: the user declined to run this tool`)
		_, err := os.Stat(filepath.Join(s.dir, "args.json"))
		assert.ErrorIs(t, err, os.ErrNotExist, "a declined call runs nothing")
		reqs := ts.reqs()
		require.Len(t, reqs, 3)
		assert.Contains(t, reqs[1].Messages[2]["content"], "the user declined to run this tool")
	})
	t.Run("always", func(t *testing.T) {
		t.Parallel()
		ts := twoCalls(t)
		s := ts.env(newSandbox(t))
		s.initRepo()
		writeScript(t, s, "lookup.sh", lookupScript)
		p := s.startPTY("chat", "--tool", "lookup=./lookup.sh", "--approve-tools", "What is x?")
		p.waitFor(`run tool lookup({"input":"x"})? [y]es, [N]o, [a]lways: `)
		p.send("a\r")
		assert.Equal(t, exitOK, p.exit())
		out := p.finalOutput()
		assert.Contains(t, out, `tool: lookup({"input":"z"}) → 42`)
		assert.NotContains(t, out, `run tool lookup({"input":"z"})?`, "always: not asked again")
	})
	t.Run("interactive chat", func(t *testing.T) {
		t.Parallel()
		ts := twoCalls(t)
		s := ts.env(newSandbox(t))
		s.initRepo()
		writeScript(t, s, "lookup.sh", lookupScript)
		p := s.startPTY("chat", "-i", "--tool", "lookup=./lookup.sh", "--approve-tools")
		p.waitFor("> ")
		p.send("What is x?\r")
		p.waitFor(`run tool lookup({"input":"x"})? [y]es, [N]o, [a]lways: `)
		p.send("y")
		p.waitFor(`tool: lookup({"input":"x"}) → 42`)
		p.waitFor(`run tool lookup({"input":"z"})? [y]es, [N]o, [a]lways: `)
		p.send("n")
		p.waitFor("the user declined to run this tool")
		p.waitFor("done")
		p.send("\x04") // Ctrl-D
		assert.Equal(t, exitOK, p.exit())
	})
}

// On a terminal the answer streams; a tool's line, on standard error,
// starts on a line of its own after the text the calling answer streamed.
func TestChat_ToolLineAfterAStreamedText(t *testing.T) {
	t.Parallel()
	ts := newToolServer(t,
		toolReply{Content: "Let me look.", Calls: []toolCall{{ID: "call_1", Name: "lookup", Args: `{"input":"x"}`}}},
		toolReply{Content: "x is 42."},
	)
	s := ts.env(newSandbox(t))
	s.initRepo()
	writeScript(t, s, "lookup.sh", lookupScript)
	p := s.startPTY("chat", "--tool", "lookup=./lookup.sh", "What is x?")
	assert.Equal(t, exitOK, p.exit())
	assert.Contains(t, p.finalOutput(), "Let me look.\r\ntool: lookup({\"input\":\"x\"}) → 42\r\nx is 42.\r\n")
}

// The same in the interactive chat: the tool's line of the transcript
// follows the streamed text on a line of its own.
func TestChat_ToolLineInTheREPLAfterAStreamedText(t *testing.T) {
	t.Parallel()
	ts := newToolServer(t,
		toolReply{Content: "Let me look.", Calls: []toolCall{{ID: "call_1", Name: "lookup", Args: `{"input":"x"}`}}},
		toolReply{Content: "x is 42."},
	)
	s := ts.env(newSandbox(t))
	s.initRepo()
	writeScript(t, s, "lookup.sh", lookupScript)
	p := s.startPTY("chat", "-i", "--tool", "lookup=./lookup.sh")
	p.waitFor("> ")
	p.send("What is x?\r")
	p.waitFor("Let me look.\r\ntool: lookup({\"input\":\"x\"}) → 42\r\nx is 42.")
	p.send("\x04")
	assert.Equal(t, exitOK, p.exit())
}
