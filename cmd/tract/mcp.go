package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/httpauth"
	"github.com/tractdag/tract/mcpserver"
)

// MCPOptions are the inputs of 'tract mcp'.
type MCPOptions struct {
	Factory *Factory
	// ReadOnly is --read-only: only the reading tools, and the
	// repository opened read-only.
	ReadOnly bool
}

func newCmdMCP(f *Factory, runF func(*MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the repository to agents over MCP, on stdio",
		Long: `Run a Model Context Protocol server on standard input and output, for an
agent (Claude Code, Cursor, the OpenAI Agents SDK, …) to read and steer its
own history as tools: log (with the orphaned attempts a retry purified
away), show, compile, status, search, stats, branches and escalations to
read; branch, reset (soft only), note and answer_escalation to write, each
a compare-and-swap that fails with a conflict rather than overwrite another
writer. Resources: tract://commit/{rev}, tract://branch/{name} and
tract://branches. --read-only
offers only the reading tools and opens the repository read-only. The
repository is found as for every command (--db, TRACT_DB, the nearest
.tract/), from the directory the agent starts the server in. 'tract serve'
offers the same server over HTTP at /mcp.

Register it with Claude Code, or in the mcpServers of a client's settings:
  claude mcp add tract -- tract mcp
  claude mcp add tract-ro -- tract --db /path/to/.tract/tract.db mcp --read-only
  {"mcpServers": {"tract": {"command": "tract", "args": ["mcp"]}}}
  (Cursor: .cursor/mcp.json; Claude Desktop: claude_desktop_config.json)`,
		Example: `  tract mcp
  tract mcp --read-only
  claude mcp add tract -- tract mcp`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return mcpRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.ReadOnly, "read-only", false, "offer only the tools that read, and open the repository read-only")
	return cmd
}

func mcpRun(ctx context.Context, opts *MCPOptions) error {
	f := opts.Factory
	t, err := openForMCP(f, opts.ReadOnly)
	if err != nil {
		return err
	}
	defer t.Close()
	mode := ""
	if opts.ReadOnly {
		mode = ", read-only"
	}
	fmt.Fprintf(f.IO.ErrOut, "tract mcp: serving %s over stdio%s\n", t.Path(), mode)
	if f.IO.InTTY {
		fmt.Fprintln(f.IO.ErrOut, "tract mcp: waiting for an MCP client's JSON-RPC on standard input; an agent starts this server itself\n"+
			"(claude mcp add tract -- tract mcp), and 'tract serve' offers it over HTTP at /mcp")
	}
	// Each message goes out at once: standard output is buffered for the
	// whole command otherwise.
	err = mcpserver.Run(ctx, t, f.IO.In, flushingWriter{f.IO.Out}, mcpOptions(opts.ReadOnly)...)
	if errors.Is(err, context.Canceled) {
		return nil // Ctrl-C, or the agent stopping the server
	}
	return err
}

// openForMCP opens the repository, read-only when readOnly.
func openForMCP(f *Factory, readOnly bool) (*tract.Tract, error) {
	if !readOnly {
		return f.Open()
	}
	return f.Open(tract.WithReadOnly())
}

// mcpOptions are the server's options: the version, and read-only.
func mcpOptions(readOnly bool) []mcpserver.Option {
	opts := []mcpserver.Option{mcpserver.WithVersion(buildVersion())}
	if readOnly {
		opts = append(opts, mcpserver.ReadOnly())
	}
	return opts
}

// mcpHandler is the MCP server 'tract serve' mounts at /mcp, behind the
// guard of every route: the token in a header (the login cookie is the
// web view's, not an agent's), the Host, a browser's cross-origin
// request. closeAll ends its sessions, for the server's shutdown.
func mcpHandler(t *tract.Tract, guard *httpauth.Guard, readOnly bool) (h http.Handler, closeAll func()) {
	m := mcpserver.NewHandler(t, mcpOptions(readOnly)...)
	return guard.Wrap(m, httpauth.HeadersOnly()), m.Close
}
