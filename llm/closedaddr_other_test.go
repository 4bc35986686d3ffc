//go:build !unix

package llm_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// closedAddr returns a loopback address nothing listens on. Off unix the
// port is only free, not held: another listener may be given it.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}
