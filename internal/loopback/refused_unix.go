//go:build unix

package loopback

import (
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// Refused returns a loopback address that refuses connections until
// release is called: its port is bound by a socket that never listens, so
// no listener and no client's source port can be given it meanwhile.
func Refused() (addr string, release func(), err error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return "", nil, fmt.Errorf("refused address: %w", err)
	}
	release = func() { syscall.Close(fd) }
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		release()
		return "", nil, fmt.Errorf("refused address: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	in4, ok := sa.(*syscall.SockaddrInet4)
	if err != nil || !ok {
		release()
		return "", nil, fmt.Errorf("refused address: socket name %T: %v", sa, err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port)), release, nil
}
