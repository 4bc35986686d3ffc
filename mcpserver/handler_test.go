package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/mcpserver"
)

// The HTTP handler serves a session over streamable HTTP, and Close ends
// it: the client's stream of server events no longer holds a connection.
func TestHandler_ServesAndCloses(t *testing.T) {
	f := newFixture(t)
	h := mcpserver.NewHandler(f.t, mcpserver.ReadOnly())
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-agent", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer cs.Close()
	assert.Equal(t, readTools, toolNames(t, cs))
	res := callRaw(t, cs, "status", nil)
	require.False(t, res.IsError, text(res))

	h.Close()
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's session did not end when the handler closed it")
	}
}
