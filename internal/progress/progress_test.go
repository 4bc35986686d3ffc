package progress_test

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/progress"
)

func TestCounter_ReportsMonotonicCountsEndingAtTheTotal(t *testing.T) {
	var mu sync.Mutex
	var got [][2]int64
	c := progress.StartEvery(func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, [2]int64{done, total})
	}, 1000, time.Millisecond)
	for i := range 1000 {
		c.Add(1)
		if i%100 == 0 {
			time.Sleep(2 * time.Millisecond) // let the ticker see some work
		}
	}
	c.Stop()
	c.Stop() // a second Stop reports nothing
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, got)
	assert.Equal(t, [2]int64{1000, 1000}, got[len(got)-1])
	for i := 1; i < len(got); i++ {
		assert.GreaterOrEqual(t, got[i][0], got[i-1][0], "done never decreases")
		assert.LessOrEqual(t, got[i][0], got[i][1], "done never passes the total")
	}
}

func TestCounter_UnknownTotalEndsAtTheCount(t *testing.T) {
	var last [2]int64
	c := progress.Start(func(done, total int64) { last = [2]int64{done, total} }, 0)
	c.Add(7)
	c.Stop()
	assert.Equal(t, [2]int64{7, 7}, last)
}

func TestCounter_NilCountsNothing(t *testing.T) {
	c := progress.Start(nil, 10)
	assert.Nil(t, c)
	c.Add(1)
	c.SetTotal(2)
	c.Stop()
}

func TestLine_RewritesInPlaceAndClears(t *testing.T) {
	var buf bytes.Buffer
	l := progress.NewLine(&buf, "fsck")
	l.Set("1 objects")
	l.Set("2 objects") // within the interval: skipped
	l.Clear()
	assert.Equal(t, "\r\x1b[Kfsck: 1 objects\r\x1b[K", buf.String())
	var none *progress.Line
	none.Set("x")
	none.Clear()
}

func TestCount(t *testing.T) {
	assert.Equal(t, "1,234 of 5,000 commits (24%)", progress.Count(1234, 5000, "commits"))
	assert.Equal(t, "1,234,567 objects", progress.Count(1234567, 0, "objects"))
	assert.Equal(t, "12 objects", progress.Count(12, 0, "objects"))
	assert.Equal(t, "1 conversation", progress.Count(1, 0, "conversations"))
}

func BenchmarkCounter_Add(b *testing.B) {
	c := progress.Start(func(int64, int64) {}, 0)
	defer c.Stop()
	for b.Loop() {
		c.Add(1)
	}
}
