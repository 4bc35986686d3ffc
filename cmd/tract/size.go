package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes parseSize takes, by lower-case spelling:
// binary (KiB, and K as in dd and docker) and decimal (KB).
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// parseSize reads a size in bytes of 1 or more: a number of bytes, or a
// whole number with a unit, as 512KiB, 64MiB, 1GiB, 64M (binary) or
// 100MB (decimal); case and a space before the unit do not matter.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if i == 0 || !ok {
		return 0, fmt.Errorf("%q is not a size: give bytes, or a number with a unit such as 512KiB, 64MiB or 1GiB", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%q is too large a size", s)
	}
	if n == 0 {
		return 0, fmt.Errorf("%q: a size limit must be 1 byte or more", s)
	}
	return n * unit, nil
}
