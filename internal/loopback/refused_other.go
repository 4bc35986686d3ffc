//go:build !unix

package loopback

import "net"

// Refused returns a loopback address nothing listens on. Off unix the
// port is only free, not held: another listener may be given it.
func Refused() (addr string, release func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr = l.Addr().String()
	return addr, func() {}, l.Close()
}
