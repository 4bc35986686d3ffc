package httpauth

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// hostAllowed reports whether a Host header names this machine (or a
// name given to WithHosts).
func (g *Guard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	return IsLoopback(host) || g.hosts[host]
}

// IsLoopback reports whether host (no port) names only this machine:
// localhost (and NAME.localhost, which resolvers keep on the machine),
// an address of 127.0.0.0/8, or ::1.
func IsLoopback(host string) bool {
	host = strings.ToLower(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// crossOrigin returns the refusal of a state-changing request that a
// browser sent from another origin.
func crossOrigin(r *http.Request) *Error {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return &Error{Status: http.StatusForbidden, Code: CodeCrossOrigin,
			Message: r.Method + " " + r.URL.Path + " refused: a " + site + " request (Sec-Fetch-Site) may not change the repository; send it from this server's own pages"}
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
		return &Error{Status: http.StatusForbidden, Code: CodeCrossOrigin,
			Message: r.Method + " " + r.URL.Path + " refused: Origin " + quote(origin) + " is not this server (" + r.Host + "); send it from this server's own pages"}
	}
	return nil
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
