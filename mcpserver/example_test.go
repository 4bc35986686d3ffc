package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/mcpserver"
)

// An agent's client, here in the same process, lists the tools of a
// read-only server and calls one; its structured result is status
// --json's record.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "tract-mcp-example")
	defer os.RemoveAll(dir)
	t, err := tract.Init(filepath.Join(dir, "tract.db"))
	if err != nil {
		panic(err)
	}
	defer t.Close()
	ctx := context.Background()
	t.User(ctx, "What is a DAG?")
	t.Assistant(ctx, "A directed acyclic graph.")

	serverSide, clientSide := mcp.NewInMemoryTransports()
	session, err := mcpserver.New(t, mcpserver.ReadOnly()).Connect(ctx, serverSide, nil)
	if err != nil {
		panic(err)
	}
	defer session.Close()
	client, err := mcp.NewClient(&mcp.Implementation{Name: "example-agent", Version: "1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	tools, _ := client.ListTools(ctx, nil)
	for _, tl := range tools.Tools {
		fmt.Println(tl.Name)
	}
	res, _ := client.CallTool(ctx, &mcp.CallToolParams{Name: "status", Arguments: map[string]any{}})
	st := res.StructuredContent.(map[string]any)
	fmt.Println(st["branch"], st["length"], st["messages"])
	// Output:
	// branches
	// compile
	// escalations
	// log
	// search
	// show
	// stats
	// status
	// main 2 2
}
