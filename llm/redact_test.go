package llm_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// urlKey has the characters that percent-encoding and base64 change.
const urlKey = "sk-Ab/cd+ef=gh:ij@kl~mn_op"

// assertNoKey checks that no form of key is in s: as is, percent-encoded
// the ways URLs and servers write it, or base64-encoded at any offset (a
// Basic authorization header echoed back).
func assertNoKey(t *testing.T, s, key string) {
	t.Helper()
	forms := map[string]string{
		"raw":             key,
		"QueryEscape":     url.QueryEscape(key),
		"PathEscape":      url.PathEscape(key),
		"userinfo":        url.User(key).String(),
		"lower-case hex":  lowerHex(url.QueryEscape(key)),
		"every byte":      percentAll(key),
		"base64 of key":   middle(base64.StdEncoding.EncodeToString([]byte(key))),
		"base64 of u:key": middle(base64.StdEncoding.EncodeToString([]byte("u:" + key))),
		"base64 of :key":  middle(base64.URLEncoding.EncodeToString([]byte(":" + key))),
	}
	for name, f := range forms {
		assert.NotContains(t, s, f, "the key, %s", name)
	}
}

// percentAll escapes every byte of s.
func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// lowerHex writes the hex digits of the percent-escapes in s in lower case.
func lowerHex(s string) string {
	parts := strings.Split(s, "%")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToLower(parts[i][:2]) + parts[i][2:]
	}
	return strings.Join(parts, "%")
}

// middle returns 12 characters from the middle of an encoding: characters
// only the key determines.
func middle(s string) string { return s[len(s)/2-6 : len(s)/2+6] }

// A key reaches error text in many forms; none of them survives, on any
// error path.
func TestOpenAI_KeyRedactedInEveryEncoding(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("user:" + urlKey))
	tests := []struct {
		name string
		// base builds the base URL from a live server's and a dead one's.
		base  func(live, dead string) string
		reply llmtest.Reply
		key   bool // configure urlKey as the API key
		want  any  // the error type
	}{
		{"transport error, key query-escaped in the base URL",
			func(_, dead string) string { return dead + "?api-key=" + url.QueryEscape(urlKey) },
			llmtest.Reply{}, true, new(*llm.TransportError)},
		{"transport error, key path-escaped in the base URL",
			func(_, dead string) string { return dead + "/keys/" + url.PathEscape(urlKey) },
			llmtest.Reply{}, true, new(*llm.TransportError)},
		{"transport error, key as the user of the base URL",
			func(_, dead string) string {
				return strings.Replace(dead, "://", "://"+url.User(urlKey).String()+"@", 1)
			},
			llmtest.Reply{}, true, new(*llm.TransportError)},
		{"transport error, key only in the base URL, no API key",
			func(_, dead string) string { return dead + "?key=" + url.QueryEscape(urlKey) },
			llmtest.Reply{}, false, new(*llm.TransportError)},
		{"server error echoing the query-escaped key",
			func(live, _ string) string { return live },
			llmtest.Error(http.StatusNotFound, "no deployment at /v1/chat/completions?api-key="+url.QueryEscape(urlKey)),
			true, new(*llm.APIError)},
		{"server error echoing the key in lower-case hex",
			func(live, _ string) string { return live },
			llmtest.Error(http.StatusBadRequest, "bad key "+lowerHex(url.QueryEscape(urlKey))),
			true, new(*llm.APIError)},
		{"401 echoing the Basic header of the base URL's userinfo",
			func(live, _ string) string {
				return strings.Replace(live, "://", "://"+url.UserPassword("user", urlKey).String()+"@", 1)
			},
			llmtest.Reply{Status: http.StatusUnauthorized, Body: `{"error":{"message":"invalid credentials: Basic ` + basic + `"}}`},
			false, new(*llm.AuthError)},
		{"HTML page echoing the base64 key",
			func(live, _ string) string { return live },
			llmtest.Reply{Body: "<html>token " + base64.StdEncoding.EncodeToString([]byte("x"+urlKey)) + "</html>", ContentType: "text/html"},
			true, new(*llm.BadResponseError)},
		{"plain-text body echoing the percent-encoded key",
			func(live, _ string) string { return live },
			llmtest.Reply{Status: http.StatusNotImplemented, Body: "unknown " + percentAll(urlKey), ContentType: "text/plain"},
			true, new(*llm.ServerError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithoutVerify())
			srv.Otherwise(tt.reply)
			opts := []llm.Option{llm.WithMaxRetries(0)}
			if tt.key {
				opts = append(opts, llm.WithAPIKey(urlKey))
			}
			c, _ := newClient(t, tt.base(srv.URL(), "http://"+closedAddr(t)+"/v1"), opts...)

			_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})

			require.Error(t, err)
			assert.ErrorAs(t, err, tt.want)
			assertNoKey(t, err.Error(), urlKey)
			assert.Contains(t, err.Error(), "[REDACTED]")
			if te := (*llm.TransportError)(nil); errors.As(err, &te) {
				assertNoKey(t, te.Err.Error(), urlKey)
			}
		})
	}
}

// A base URL that does not parse is quoted in the configuration error,
// without its key.
func TestNewOpenAI_BadBaseURLErrorHidesKey(t *testing.T) {
	_, err := llm.NewOpenAI(llm.WithModel("m"), llm.WithAPIKey(urlKey),
		llm.WithBaseURL("localhost:11434/v1/"+url.PathEscape(urlKey)+"?api-key="+url.QueryEscape(urlKey)))

	var ce *llm.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "base URL", ce.Setting)
	assert.Contains(t, err.Error(), `invalid base URL "localhost:11434/v1/`)
	assertNoKey(t, err.Error(), urlKey)
}

// RedactKey hides a key the client never used, in every form its errors
// would.
func TestRedactKey(t *testing.T) {
	const key = "sk-Test/Key+With=Chars"
	got := llm.RedactKey("raw "+key+", query "+url.QueryEscape(key)+", quoted "+strconv.Quote(key), key)
	assert.NotContains(t, got, "Test")
	assert.Equal(t, 3, strings.Count(got, "[REDACTED]"), got)
	assert.Equal(t, "nothing to hide", llm.RedactKey("nothing to hide", ""))
}

// credentialNames are the query parameters a URL's credentials go in.
var credentialNames = []string{"key", "api_key", "apikey", "token", "access_token", "code", "sig", "signature", "password", "secret"}

// planted returns a credential of n characters that nothing else in an
// error's text holds: it starts with Z, and its other characters are
// unreserved in URLs (they stay as they are in a request's URL).
func planted(n int) string {
	const chars = "ZQJzqj-_~.09"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[i*7%len(chars)]
	}
	b[0] = 'Z'
	return string(b)
}

// A credential in the base URL's query, or its userinfo, of any length
// from 1 to 64 characters, is in no error: not in its text, not in the
// URL of the *url.Error it wraps, not in APIError.BaseURL.
func TestOpenAI_URLCredentialsRedactedAtAnyLength(t *testing.T) {
	dead := "http://" + closedAddr(t)
	for n := 1; n <= 64; n++ {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var q []string
			for _, name := range credentialNames {
				q = append(q, name+"="+planted(n))
			}
			base := strings.Replace(dead, "://", "://"+planted(n)+"@", 1) + "/v1?" + strings.Join(q, "&")
			c, _ := newClient(t, base, llm.WithMaxRetries(0))

			_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})

			var te *llm.TransportError
			require.ErrorAs(t, err, &te)
			for _, text := range []string{err.Error(), te.Err.Error(), te.BaseURL} {
				assert.NotContains(t, text, planted(n))
			}
			assert.Contains(t, err.Error(), "key=[REDACTED]")
			assert.Contains(t, te.BaseURL, "[REDACTED]@")
		})
	}
}
