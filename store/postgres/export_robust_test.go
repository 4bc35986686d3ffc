package postgres

import "time"

// Timeouts returns the connect and reply timeouts a Store of url and opts
// would use, without connecting.
func Timeouts(url string, opts ...Option) (connect, reply time.Duration, err error) {
	loc, err := parseLocation(url)
	if err != nil {
		return 0, 0, err
	}
	s := newStore(loc, opts)
	return s.server.connectTimeout, s.server.replyTimeout, nil
}
