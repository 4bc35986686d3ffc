package loopback_test

import (
	"errors"
	"net"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/loopback"
)

// Connections to the address are refused, and no listener can take its
// port while it is held.
func TestRefused(t *testing.T) {
	addr, release, err := loopback.Refused()
	require.NoError(t, err)
	defer release()
	for range 3 {
		_, err := net.Dial("tcp", addr)
		assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "%v", err)
	}
	if runtime.GOOS != "windows" {
		_, err = net.Listen("tcp", addr)
		assert.Error(t, err, "the port is held")
	}
}
