//go:build unix

package llm_test

import (
	"net"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// closedAddr returns a loopback address that refuses connections for the
// whole test. The port is bound by a socket that never listens, so a
// connection is refused and no other listener (another package's test
// server, run in parallel) can be given the port while the test retries.
func closedAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	in4, ok := sa.(*syscall.SockaddrInet4)
	require.True(t, ok, "socket name %T", sa)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port))
}
