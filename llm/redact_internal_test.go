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

func TestRedactor_ZeroAndNilRedactNothing(t *testing.T) {
	assert.Equal(t, "sk-1", (*redactor)(nil).redact("sk-1"))
	assert.Equal(t, "sk-1", (&redactor{}).redact("sk-1"))
}
