// Package progress counts the work of a long operation and reports it at
// most ten times a second, from a goroutine of its own.
//
// The counting side is one atomic addition per call: it never waits for
// the report, so an operation may count inside a transaction or with the
// file lock held while the report (a user's callback, a line written to a
// terminal) runs outside them, in the Counter's goroutine. Reports carry
// counts that never decrease; Stop ends the reports with a last one, made
// in the caller's goroutine after the ticking goroutine has ended, whose
// done and total are equal. Reports are never concurrent.
//
// A nil *Counter counts nothing and costs nothing, so code counts
// unconditionally:
//
//	p := progress.Start(fn, total) // nil when fn is nil
//	defer p.Stop()
//	for … { work(); p.Add(1) }
package progress

import (
	"sync"
	"sync/atomic"
	"time"
)

// Interval is the time between two reports.
const Interval = 100 * time.Millisecond

// Counter counts work done and reports it every Interval while it changes.
type Counter struct {
	done, total atomic.Int64
	report      func(done, total int64)
	stop        chan struct{}
	wg          sync.WaitGroup
	once        sync.Once
}

// Start returns a Counter that reports to report every Interval while
// the count changes; total is the amount of work (0 when not known yet,
// see SetTotal). A nil report gives a nil Counter.
func Start(report func(done, total int64), total int64) *Counter {
	return StartEvery(report, total, Interval)
}

// StartEvery is Start with another interval (tests).
func StartEvery(report func(done, total int64), total int64, every time.Duration) *Counter {
	if report == nil {
		return nil
	}
	c := &Counter{report: report, stop: make(chan struct{})}
	c.total.Store(total)
	c.wg.Add(1)
	go c.tick(every)
	return c
}

func (c *Counter) tick(every time.Duration) {
	defer c.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	var lastDone, lastTotal int64 = -1, -1
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			done, total := c.done.Load(), c.total.Load()
			if done != lastDone || total != lastTotal {
				lastDone, lastTotal = done, total
				c.report(done, max(total, done))
			}
		}
	}
}

// Add counts n more units done.
func (c *Counter) Add(n int64) {
	if c != nil {
		c.done.Add(n)
	}
}

// SetTotal sets the amount of work, once it is known.
func (c *Counter) SetTotal(total int64) {
	if c != nil {
		c.total.Store(total)
	}
}

// Stop ends the reports with a last one whose total is the count done,
// once the ticking goroutine has ended. Later calls do nothing.
func (c *Counter) Stop() {
	if c == nil {
		return
	}
	c.once.Do(func() {
		close(c.stop)
		c.wg.Wait()
		done := c.done.Load()
		c.report(done, done)
	})
}
