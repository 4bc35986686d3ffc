package llm

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedactor(t *testing.T) {
	tests := []struct {
		name, key, base, in, want string
	}{
		{"no secrets", "", "http://h/v1", "a sk-123 b", "a sk-123 b"},
		{"raw", "sk-123", "", "a sk-123 b sk-123", "a [REDACTED] b [REDACTED]"},
		{"percent-encoded in any case", "k/y+z", "", "k%2Fy%2bz k%2fy+z", "[REDACTED] [REDACTED]"},
		{"space as plus", "my key", "", "?k=my+key&x", "?k=[REDACTED]&x"},
		{"broken escape is no match", "k/yz", "", "k%2 k%zzyz", "k%2 k%zzyz"},
		{"Go and JSON quoting", `sk"\q`, "", `"sk\"\\q"`, `"[REDACTED]"`},
		{"longest secret first", "abcdefgh", "http://h/?token=abcdefghij", "abcdefghij", "[REDACTED]"},
		{"URL password", "", "http://user:p4ssw0rd!@h/v1", "Basic dXNlcjpwNHNzdzByZCE=", "Basic dXNlcjpw[REDACTED]"},
		{"URL user without password", "", "http://t0k3n-abcdef@h/v1", "user t0k3n-abcdef", "user [REDACTED]"},
		{"secret-looking query parameters", "", "http://h/v1?api-key=s3cr3t-v4lue&sig=s1gn4tur3x&mode=verbose-mode",
			"s3cr3t-v4lue s1gn4tur3x verbose-mode", "[REDACTED] [REDACTED] verbose-mode"},
		{"short URL secrets are left", "", "http://h/v1?key=1", "HTTP 401", "HTTP 401"},
		{"short key has no base64 runs", "abc", "", "YWJj abc", "YWJj [REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var u *url.URL
			if tt.base != "" {
				var err error
				u, err = url.Parse(tt.base)
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, newRedactor(tt.key, u).redact(tt.in))
		})
	}
}

func TestRedactor_ZeroAndNilRedactNoKey(t *testing.T) {
	assert.Equal(t, "sk-1", (*redactor)(nil).redact("sk-1"))
	assert.Equal(t, "sk-1", (&redactor{}).redact("sk-1"))
}

// Credentials written in a URL are redacted whatever their length and
// whoever's they are; other parameters, and text that is no URL, stay.
func TestRedactURLs(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"one-character key", `Post "http://h/v1/chat/completions?key=Q": refused`, `Post "http://h/v1/chat/completions?key=[REDACTED]": refused`},
		{"every name, any case", "?API_KEY=a&apikey=b&Token=c&access_token=d&code=e&SIG=f&signature=g&password=h&secret=i&api-key=j",
			"?API_KEY=[REDACTED]&apikey=[REDACTED]&Token=[REDACTED]&access_token=[REDACTED]&code=[REDACTED]&SIG=[REDACTED]&signature=[REDACTED]&password=[REDACTED]&secret=[REDACTED]&api-key=[REDACTED]"},
		{"other parameters stay", "?model=gpt&key=k1&mode=fast#frag", "?model=gpt&key=[REDACTED]&mode=fast#frag"},
		{"empty value", "?key=&x=1", "?key=&x=1"},
		{"percent-encoded URL in a query", "?next=http%3A%2F%2Fh%2F%3Ftoken%3Dabc%26x%3D1", "?next=http%3A%2F%2Fh%2F%3Ftoken%3D[REDACTED]%26x%3D1"},
		{"JSON-escaped ampersand", `"url":"http://h/?a=1\u0026sig=xyz"`, `"url":"http://h/?a=1\u0026sig=[REDACTED]"`},
		{"HTML-escaped ampersand", "http://h/?a=1&amp;code=42 done", "http://h/?a=1&amp;code=[REDACTED] done"},
		{"value ends at white space and quotes", "?secret=s3 and 'x?password=p'", "?secret=[REDACTED] and 'x?password=[REDACTED]'"},
		{"userinfo", "http://u:p@h/v1 and https://tok@h2", "http://[REDACTED]@h/v1 and https://[REDACTED]@h2"},
		{"no parameter without a separator", "exit code=1, key=2", "exit code=1, key=2"},
		{"an e-mail address is no userinfo", "write to a@b.example", "write to a@b.example"},
		{"already redacted", "http://[REDACTED]@h/?key=[REDACTED]", "http://[REDACTED]@h/?key=[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, RedactURLs(tt.in))
			assert.Equal(t, tt.want, (*redactor)(nil).redact(tt.in), "every redactor does it")
		})
	}
}
