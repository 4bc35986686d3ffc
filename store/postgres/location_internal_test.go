package postgres

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidRepositoryName(t *testing.T) {
	for name, want := range map[string]bool{
		"default":                true,
		"a":                      true,
		"Team-1/agents_v2.prod":  true,
		"9lives":                 true,
		strings.Repeat("a", 128): true,
		"":                       false,
		"-x":                     false,
		".hidden":                false,
		"/root":                  false,
		"a b":                    false,
		"naïve":                  false,
		"a?b":                    false,
		strings.Repeat("a", 129): false,
	} {
		assert.Equal(t, want, validRepositoryName(name), "%q", name)
	}
}

// A URL's scheme is compared without regard to case, as store.OpenURL
// compares it when it picks this driver, and a URL that is refused is
// shown without its password.
func TestParseLocation_SchemeInAnyCase(t *testing.T) {
	for _, raw := range []string{"POSTGRES://ada:s3cret@db.invalid/tract", "PostgreSQL://ada:s3cret@db.invalid/tract"} {
		assert.True(t, IsURL(raw), raw)
		loc, err := parseLocation(raw)
		if assert.NoError(t, err, raw) {
			assert.Equal(t, strings.ToLower(raw[:strings.Index(raw, ":")])+"://ada:xxxxx@db.invalid/tract?repository=default", loc.display)
		}
	}
	for _, raw := range []string{"dir/postgres://db.invalid/tract", "postgres:/x", "xpostgres://db.invalid/tract"} {
		assert.False(t, IsURL(raw), raw)
	}
	_, err := parseLocation("mysql://ada:s3cret@db.invalid/tract")
	assert.EqualError(t, err, `"mysql://ada:xxxxx@db.invalid/tract" is not a postgres:// or postgresql:// URL`)
}

// The repository and the other parameters are read from a URL with or
// without a query of pgx's; a query that does not parse whole is an
// error, never a parameter dropped (a dropped repository parameter would
// open the default repository).
func TestParseLocation_Query(t *testing.T) {
	const base = "postgres://ada:s3cret@db.invalid:5432/tract"
	for raw, want := range map[string]string{
		base:                        "default",
		base + "?repository=team/a": "team/a",
		base + "?sslmode=disable":   "default",
		base + "?sslmode=disable&repository=team/a":                      "team/a",
		base + "?repository=team%2Fa&sslmode=disable&application_name=x": "team/a",
	} {
		loc, err := parseLocation(raw)
		if assert.NoError(t, err, raw) {
			assert.Equal(t, want, loc.repository, raw)
			assert.NotContains(t, loc.pool.ConnString(), "repository=", "tract's parameter is not the server's")
			assert.Contains(t, loc.display, "repository="+strings.ReplaceAll(want, "/", "%2F"))
		}
	}
	for raw, want := range map[string]string{
		base + "?repository=team%zz":                 `database URL: malformed query (after '?'): invalid URL escape "%zz"`,
		base + "?sslmode=disable;repository=team":    `database URL: malformed query (after '?'): invalid semicolon separator in query`,
		base + "?password=s3cret%zz&repository=team": `database URL: malformed query (after '?'): invalid URL escape "%zz"`,
	} {
		_, err := parseLocation(raw)
		assert.EqualError(t, err, want, raw)
		_, err = ServerURL(raw)
		assert.EqualError(t, err, want, raw)
	}
}

// A URL of several hosts (a primary and its standbys) reaches pgx whole:
// every host, in order, and target_session_attrs, with tract's own
// parameters taken out; errors name every host.
func TestParseLocation_SeveralHosts(t *testing.T) {
	const raw = "postgres://ada:s3cret@db1.invalid:5432,db2.invalid:5433,db3.invalid/tract" +
		"?target_session_attrs=read-write&repository=team/a&reply_timeout=5s&sslmode=disable"
	loc, err := parseLocation(raw)
	require.NoError(t, err)
	assert.Equal(t, "team/a", loc.repository)
	assert.Equal(t, 5*time.Second, loc.replyTimeout)
	cc := loc.pool.ConnConfig
	hosts := []string{net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))}
	for _, fb := range cc.Fallbacks {
		hosts = append(hosts, net.JoinHostPort(fb.Host, strconv.Itoa(int(fb.Port))))
	}
	assert.Equal(t, []string{"db1.invalid:5432", "db2.invalid:5433", "db3.invalid:5432"}, hosts)
	assert.NotNil(t, cc.ValidateConnect, "target_session_attrs=read-write reached pgx")
	assert.Equal(t, "tract", cc.Database)
	assert.NotContains(t, loc.pool.ConnString(), "repository=")
	assert.NotContains(t, loc.pool.ConnString(), "reply_timeout=")
	assert.Equal(t, "postgres://ada:xxxxx@db1.invalid:5432,db2.invalid:5433,db3.invalid/tract"+
		"?target_session_attrs=read-write&sslmode=disable&repository=team%2Fa", loc.display)

	s := newStore(loc, nil)
	assert.Equal(t, "db1.invalid:5432,db2.invalid:5433,db3.invalid:5432", s.server.addr)
	assert.True(t, s.server.several)

	server, err := ServerURL(raw)
	require.NoError(t, err)
	assert.Equal(t, "postgres://ada:s3cret@db1.invalid:5432,db2.invalid:5433,db3.invalid/tract"+
		"?target_session_attrs=read-write&sslmode=disable", server)

	// The parameters pgx reads go to it as written: a space escaped as
	// %20 stays so, where url.Values.Encode would write '+', a plus sign
	// to pgx.
	loc, err = parseLocation("postgres://ada@db1.invalid/tract?options=-c%20search_path%3Dx&repository=a&application_name=a+b")
	require.NoError(t, err)
	assert.Equal(t, "-c search_path=x", loc.pool.ConnConfig.RuntimeParams["options"])
	assert.Equal(t, "a+b", loc.pool.ConnConfig.RuntimeParams["application_name"])

	// One host tried with TLS and without (sslmode=prefer) is named once.
	loc, err = parseLocation("postgres://ada:s3cret@db1.invalid/tract")
	require.NoError(t, err)
	s = newStore(loc, nil)
	assert.Equal(t, "db1.invalid:5432", s.server.addr)
	assert.False(t, s.server.several)
}

// With sslmode left to its default (prefer), a server on loopback is tried
// without TLS first, then with it; any other server, or an sslmode the URL
// gives, keeps pgx's order.
func TestParseLocation_PlainFirstOnLoopback(t *testing.T) {
	t.Setenv("PGSSLMODE", "")
	t.Setenv("PGSERVICE", "")
	type try struct {
		host string
		tls  bool
	}
	tries := func(raw string) []try {
		t.Helper()
		loc, err := parseLocation(raw)
		require.NoError(t, err)
		cc := loc.pool.ConnConfig
		out := []try{{cc.Host, cc.TLSConfig != nil}}
		for _, fb := range cc.Fallbacks {
			out = append(out, try{fb.Host, fb.TLSConfig != nil})
		}
		return out
	}
	for name, tc := range map[string]struct {
		url  string
		want []try
	}{
		"loopback":           {"postgres://u@127.0.0.1/db", []try{{"127.0.0.1", false}, {"127.0.0.1", true}}},
		"localhost":          {"postgres://u@localhost/db", []try{{"localhost", false}, {"localhost", true}}},
		"IPv6 loopback":      {"postgres://u@[::1]:5432/db", []try{{"::1", false}, {"::1", true}}},
		"remote":             {"postgres://u@db.example.com/db", []try{{"db.example.com", true}, {"db.example.com", false}}},
		"sslmode given":      {"postgres://u@127.0.0.1/db?sslmode=prefer", []try{{"127.0.0.1", true}, {"127.0.0.1", false}}},
		"require stays":      {"postgres://u@127.0.0.1/db?sslmode=require", []try{{"127.0.0.1", true}}},
		"several, one local": {"postgres://u@db1.example.com,127.0.0.1/db", []try{{"db1.example.com", true}, {"db1.example.com", false}, {"127.0.0.1", false}, {"127.0.0.1", true}}},
	} {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, tries(tc.url)) })
	}
	t.Run("PGSSLMODE given", func(t *testing.T) {
		t.Setenv("PGSSLMODE", "prefer")
		assert.Equal(t, []try{{"127.0.0.1", true}, {"127.0.0.1", false}}, tries("postgres://u@127.0.0.1/db"))
	})
}
