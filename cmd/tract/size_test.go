package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"1048576", 1 << 20, ""},
		{"64MiB", 64 << 20, ""},
		{"512KiB", 512 << 10, ""},
		{"1GiB", 1 << 30, ""},
		{"2TiB", 2 << 40, ""},
		{"64M", 64 << 20, ""},
		{"64m", 64 << 20, ""},
		{"64 mib", 64 << 20, ""},
		{"100MB", 100_000_000, ""},
		{"5kb", 5000, ""},
		{"10B", 10, ""},
		{" 7 ", 7, ""},
		{"", 0, `"" is not a size`},
		{"MiB", 0, `"MiB" is not a size`},
		{"-5", 0, `"-5" is not a size`},
		{"1.5GiB", 0, `"1.5GiB" is not a size`},
		{"12 parsecs", 0, `"12 parsecs" is not a size`},
		{"0", 0, "must be 1 byte or more"},
		{"0MiB", 0, "must be 1 byte or more"},
		{"9223372036854775807", 1<<63 - 1, ""},
		{"9223372036854775808", 0, "too large"},
		{"8589934592GiB", 0, "too large"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseSize(tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
