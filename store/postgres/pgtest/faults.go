package pgtest

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/loopback"
)

// Fault servers on loopback, for tests of a database that is slow, gone or
// refusing. Each is closed when its test ends.

// HangServer listens on a loopback port, accepts connections and never
// answers on them (it holds them open until the test ends), as a server
// that hung does. It returns its address (host:port).
func HangServer(t testing.TB) string {
	t.Helper()
	return serve(t, func(c net.Conn) {
		_, _ = io.Copy(io.Discard, c) // until the client or the test gives up
	})
}

// ClosingServer listens on a loopback port and closes every connection it
// accepts at once, as a server that is going down does. It returns its
// address.
func ClosingServer(t testing.TB) string {
	t.Helper()
	return serve(t, func(c net.Conn) { _ = c.Close() })
}

// RefusedAddr returns a loopback address that refuses connections until
// the test ends (see package loopback).
func RefusedAddr(t testing.TB) string {
	t.Helper()
	addr, release, err := loopback.Refused()
	require.NoError(t, err)
	t.Cleanup(release)
	return addr
}

// WithAddr returns rawURL with its host and port replaced by addr.
func WithAddr(t testing.TB, rawURL, addr string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	u.Host = addr
	return u.String()
}

// WithParam returns rawURL with the query parameter key set to value.
func WithParam(t testing.TB, rawURL, key, value string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = encode(q)
	return u.String()
}

// serve accepts connections on a loopback port and runs handle on each,
// until the test ends; then it closes the listener and every connection.
func serve(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		mu    sync.Mutex // guards conns
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				handle(c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return l.Addr().String()
}

// Proxy forwards connections from a loopback port to a real server, and
// can freeze: stop passing bytes either way, as a server that hangs in the
// middle of a transaction does, while keeping every connection open. A
// client that gives up and closes its connection still has it closed on
// the server's side, so the server rolls back what it had open.
type Proxy struct {
	addr string

	mu sync.Mutex // guards the fields below
	// frozen holds every byte back; thawed is closed when it ends.
	frozen bool
	thawed chan struct{}
	// freezeAt freezes the proxy right after a client sends bytes
	// holding it (nil: never).
	freezeAt []byte
	conns    []net.Conn
	// cuts counts the calls of Cut: a connection made before the last
	// one passes nothing more, what it held back included.
	cuts int
	// held is closed the first time a frozen proxy holds bytes back.
	held     chan struct{}
	heldOnce sync.Once
}

// NewProxy starts a proxy in front of the server of rawURL (a URL from
// URL) and returns it; p.URL(rawURL) is rawURL through the proxy. It is
// closed when the test ends.
func NewProxy(t testing.TB, rawURL string) *Proxy {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	target := u.Host
	p := &Proxy{held: make(chan struct{})}
	p.addr = serve(t, func(client net.Conn) {
		server, err := net.Dial("tcp", target)
		if err != nil {
			_ = client.Close()
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, server)
		cuts := p.cuts
		p.mu.Unlock()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); p.pipe(server, client, true, cuts) }()
		go func() { defer wg.Done(); p.pipe(client, server, false, cuts) }()
		wg.Wait()
	})
	t.Cleanup(p.Thaw)
	return p
}

// URL returns rawURL through p.
func (p *Proxy) URL(t testing.TB, rawURL string) string {
	t.Helper()
	return WithAddr(t, rawURL, p.addr)
}

// Freeze stops p passing bytes, either way, until Thaw.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.frozen {
		p.frozen, p.thawed = true, make(chan struct{})
	}
}

// FreezeAt makes p freeze as it passes a client's bytes holding b to the
// server: those bytes reach the server, nothing after them passes either
// way, the server's reply included. FreezeAt([]byte("commit")) lets a
// COMMIT reach the server and holds back its reply.
func (p *Proxy) FreezeAt(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.freezeAt = bytes.Clone(b)
}

// Held returns a channel that is closed once p, frozen, has held bytes
// back: a client is then waiting on it.
func (p *Proxy) Held() <-chan struct{} { return p.held }

// Thaw lets bytes pass again.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen {
		p.frozen = false
		close(p.thawed)
	}
	p.freezeAt = nil
}

// Cut closes every connection p has open to the server, as a server that
// crashed or a network that broke would: what a frozen p held back on
// them is lost, not passed on by a Thaw after it.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cuts++
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// pipe copies from src to dst, holding the bytes back while p is frozen.
// It keeps reading while frozen, so that a side that closes its end is
// seen at once: then it closes both ends and returns. cuts is p.cuts when
// the connection was made: once Cut is called again, the bytes read but
// not yet passed are dropped (a reply the server sent just before it is
// not delivered after the connection is gone).
func (p *Proxy) pipe(dst, src net.Conn, fromClient bool, cuts int) {
	chunks := make(chan []byte, 1024)
	go func() {
		for b := range chunks {
			p.wait()
			if p.cut(cuts) {
				_ = dst.Close()
				return
			}
			if fromClient {
				// Frozen before the server has the bytes, so that its
				// reply cannot slip through first; these bytes, past
				// wait, still go.
				p.maybeFreeze(b)
			}
			if _, err := dst.Write(b); err != nil {
				return
			}
		}
	}()
	defer close(chunks)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunks <- bytes.Clone(buf[:n])
		}
		if err != nil {
			_ = src.Close()
			_ = dst.Close()
			return
		}
	}
}

// cut reports whether Cut was called since p.cuts was cuts.
func (p *Proxy) cut(cuts int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts != cuts
}

// wait blocks while p is frozen.
func (p *Proxy) wait() {
	for {
		p.mu.Lock()
		frozen, thawed := p.frozen, p.thawed
		p.mu.Unlock()
		if !frozen {
			return
		}
		p.heldOnce.Do(func() { close(p.held) })
		<-thawed
	}
}

// maybeFreeze freezes p when b holds what FreezeAt waits for.
func (p *Proxy) maybeFreeze(b []byte) {
	p.mu.Lock()
	at := p.freezeAt
	p.mu.Unlock()
	if at != nil && bytes.Contains(bytes.ToLower(b), bytes.ToLower(at)) {
		p.Freeze()
	}
}

// RefusingServer listens on a loopback port and answers every login as a
// PostgreSQL server that refuses it does: with a FATAL error of SQLSTATE
// code and message (53300 "sorry, too many clients already", say). It
// declines TLS first, as a server without it does. It returns its address.
func RefusingServer(t testing.TB, code, message string) string {
	t.Helper()
	return serve(t, func(c net.Conn) {
		defer c.Close()
		for {
			var head [4]byte
			if _, err := io.ReadFull(c, head[:]); err != nil {
				return
			}
			n := int(binary.BigEndian.Uint32(head[:]))
			if n < 8 || n > 1<<16 {
				return
			}
			body := make([]byte, n-4)
			if _, err := io.ReadFull(c, body); err != nil {
				return
			}
			switch binary.BigEndian.Uint32(body) {
			case 80877103, 80877104: // SSLRequest, GSSENCRequest: not here
				if _, err := c.Write([]byte{'N'}); err != nil {
					return
				}
				continue
			}
			var fields []byte
			for _, f := range [...]struct {
				tag byte
				v   string
			}{{'S', "FATAL"}, {'V', "FATAL"}, {'C', code}, {'M', message}} {
				fields = append(append(append(fields, f.tag), f.v...), 0)
			}
			fields = append(fields, 0)
			msg := append([]byte{'E'}, binary.BigEndian.AppendUint32(nil, uint32(len(fields)+4))...)
			_, _ = c.Write(append(msg, fields...))
			return
		}
	})
}
