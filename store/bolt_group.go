package store

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Group commit: the write transactions of one handle that arrive while
// another is committing wait for it, then run together in one bbolt
// transaction, which writes their pages and syncs the file once for all
// of them. Each call's Update returns only after that transaction
// committed (and synced), so nothing is acknowledged before it is
// durable. A lone write, or one that arrives while no other runs, is its
// own transaction at once: grouping adds no wait. Every function runs in
// its caller's goroutine: the leader hands the transaction to each
// waiting caller in turn and takes it back when its function returns.
//
// Each function of a group still commits or rolls back as a whole, as
// if alone: when one returns an error (or panics), the group's
// transaction rolls back, runs again without it, and the failed function
// runs alone in a transaction of its own, where its error (or panic) is
// the one it would have had alone; one that ended its goroutine
// (runtime.Goexit) ends only its caller's. A
// transaction that fails for no function's fault (its commit, a damaged
// file) has every function run alone. So a function may run more than
// once, each time in a new transaction that sees none of the writes of
// the runs before; only the run whose transaction commits counts (see
// Store.Update).

// writeGroup queues the write transactions of a session.
type writeGroup struct {
	mu    sync.Mutex
	queue []*groupCall // calls waiting for the next group, in arrival order
	busy  bool         // a leader is running a group; the queue waits for it
	last  int          // how many calls the last group ran
	// crowdAt is when a group last ended with other calls in it or
	// queued behind it (see crowded).
	crowdAt time.Time
	// quiet is closed when a group ends with none queued (see
	// quietCh), if anyone asked.
	quiet chan struct{}
}

// crowded reports whether calls wait for the next group, or waited for
// one less than crowdFor ago: the handle's writes come concurrently, as
// a server's do, and a transaction's upkeep goes to the background (see
// bolt_upkeep.go) even when, by chance, none waits for it. A handle whose
// writes come one after another does its upkeep in them.
func (g *writeGroup) crowded() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return callers(g.queue) > 0 || !g.crowdAt.IsZero() && time.Since(g.crowdAt) < crowdFor
}

// callers counts the calls of cs that are not the handle's background's.
func callers(cs []*groupCall) int {
	n := 0
	for _, c := range cs {
		if !c.background {
			n++
		}
	}
	return n
}

// crowdFor is how long after a crowded group a handle's writes still
// count as concurrent (see writeGroup.crowded).
const crowdFor = 100 * time.Millisecond

// quietCh returns nil when no write of g runs or waits, and otherwise a
// channel closed once none does.
func (g *writeGroup) quietCh() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.busy && len(g.queue) == 0 {
		return nil
	}
	if g.quiet == nil {
		g.quiet = make(chan struct{})
	}
	return g.quiet
}

// groupCall is one Update in a write group.
type groupCall struct {
	fn func(Tx) error
	// ch tells the caller, waiting in its own goroutine, to run fn in a
	// group's transaction (a message with tx), to lead the next group,
	// or that its group is done.
	ch chan groupMsg
	// ran receives what fn returned, once it has run on a message's tx;
	// errFnPanicked when it panicked or ended its goroutine.
	ran chan error
	// solo says fn is to run alone in a transaction of its own: it failed
	// in a group, the group's transaction failed, or it was alone.
	solo bool
	// background marks a write of the handle's own background (see
	// bolt_upkeep.go), which does not make the handle's writes crowded.
	background bool
	// erased, later and err are what the transaction that ran fn
	// reports for it (see Bolt.update).
	erased, later bool
	err           error
}

// groupMsg is a message to a call waiting in a write group.
type groupMsg struct {
	tx   Tx   // run fn in tx and send the result on ran
	lead bool // lead the next group
	// neither: the group that took the call is done
}

// errFnPanicked marks a function of a group that panicked, or ended its
// goroutine: it runs again alone, where its panic reaches its caller.
var errFnPanicked = errors.New("panicked")

// grouped runs fn in a write transaction of session s, grouped with the
// handle's concurrent ones, and reports as Bolt.update does.
func (b *Bolt) grouped(s *session, fn func(Tx) error, background bool) (erased, later bool, err error) {
	c := &groupCall{fn: fn, ch: make(chan groupMsg, 1), ran: make(chan error, 1), background: background}
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, c)
	lead := !g.busy
	g.busy = true
	wait := lead && g.last > 1
	g.mu.Unlock()
	if wait {
		// The callers the last group woke are likely on their way back
		// with their next writes: let them queue (they are runnable now)
		// rather than run alone and have them wait for this one.
		runtime.Gosched()
	}
	// Wait for the lead or the end of the group, running fn in the
	// group's transaction when asked: in this goroutine, the caller's,
	// as if it ran alone.
	for !lead {
		m := <-c.ch
		if m.tx == nil && !m.lead {
			break
		}
		if m.lead {
			lead = true
			break
		}
		c.ran <- c.call(m.tx)
	}
	if lead {
		b.lead(s, g, c)
	}
	if c.solo {
		return b.update(s, fn)
	}
	return c.erased, c.later, c.err
}

// maxGroup bounds how many functions one transaction runs: the first
// caller of a group waits for all of them before its sync.
const maxGroup = 64

// lead runs the queued calls of g as one group (the leader's own call,
// at the head of the queue, among them, and those that queue while its
// functions run), wakes them, and passes the lead to the first call that
// queued after it.
func (b *Bolt) lead(s *session, g *writeGroup, own *groupCall) {
	g.mu.Lock()
	taken := g.queue
	g.queue = nil
	g.mu.Unlock()
	ran := false
	// Deferred, so that a function that ends the leader's goroutine (a
	// panic of its own, runtime.Goexit as a test's FailNow does) leaves
	// no call waiting: the others then run alone.
	defer func() {
		g.mu.Lock()
		g.last = len(taken)
		if callers(taken) > 1 || callers(g.queue) > 0 {
			g.crowdAt = time.Now()
		}
		if len(g.queue) > 0 {
			g.queue[0].ch <- groupMsg{lead: true}
		} else {
			g.busy = false
			if g.quiet != nil {
				close(g.quiet)
				g.quiet = nil
			}
		}
		g.mu.Unlock()
		for _, c := range taken {
			if c == own {
				continue
			}
			if !ran {
				c.solo = true
			}
			c.ch <- groupMsg{}
		}
	}()
	b.runGroup(s, g, &taken, own)
	ran = true
}

// join moves the calls queued in g into the running group: to left, the
// functions still to commit, and taken, every call the leader wakes. It
// reports whether there were any.
func (g *writeGroup) join(left, taken *[]*groupCall) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := min(len(g.queue), maxGroup-len(*left))
	if n <= 0 {
		return false
	}
	*left = append(*left, g.queue[:n]...)
	*taken = append(*taken, g.queue[:n]...)
	g.queue = append(g.queue[:0:0], g.queue[n:]...)
	return true
}

// runGroup runs the functions of the group in one transaction, taking
// out (to run alone, in their callers' goroutines) each that fails, until
// the rest commit. The leader's own function fails as it would alone
// when it is the last one left.
func (b *Bolt) runGroup(s *session, g *writeGroup, taken *[]*groupCall, own *groupCall) {
	left := append([]*groupCall(nil), *taken...)
	for len(left) > 0 {
		failed, err := b.updateGroup(s, g, &left, taken, own)
		switch {
		case err == nil:
			return
		case len(left) == 1 && left[0] == own:
			own.err = err // alone: its error is its own
			return
		case failed >= 0:
			left[failed].solo = true
			left = append(left[:failed], left[failed+1:]...)
		default:
			for _, c := range left {
				c.solo = true
			}
			return
		}
	}
}

// updateGroup runs the functions of left in turn in one read-write
// transaction, and those of the calls that queue meanwhile (see join),
// and commits it. When a function fails (returns an error or, unless it
// is the leader's own, panics) it rolls back and returns that function's
// index; otherwise failed is -1 and err is the transaction's own error,
// if any. On success every call's erased is set, and the first's later.
func (b *Bolt) updateGroup(s *session, g *writeGroup, left, taken *[]*groupCall, own *groupCall) (failed int, err error) {
	failed = -1
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer b.guard(&err)
	var erased, fnErased, later bool
	err = s.db.Update(func(tx *bolt.Tx) error {
		btx, err := b.beginWrite(s, tx)
		if err != nil {
			return err
		}
		for i := 0; i < len(*left) || g.join(left, taken); i++ {
			c := (*left)[i]
			// Each function's own erasures: its caller completes them.
			before := btx.erased
			btx.erased = false
			if err := runIn(c, own, btx); err != nil {
				failed = i
				return err
			}
			c.erased = btx.erased
			fnErased = fnErased || btx.erased
			btx.erased = before || btx.erased
		}
		btx.crowded = callers(*left) > 1 || g.crowded()
		err = btx.finishWrite()
		erased, later = btx.erased, btx.later()
		return err
	})
	if err != nil {
		for _, c := range *left {
			c.erased = false
		}
		return failed, err
	}
	// What the transaction itself did (its journal's checkpoint dropped
	// merged packs, say) falls to the first caller.
	first := (*left)[0]
	first.erased = first.erased || erased && !fnErased
	first.later = later
	return -1, nil
}

// runIn runs c's function in tx: the leader's own here, another's in
// its caller's goroutine, which waits for it in grouped.
func runIn(c, own *groupCall, tx Tx) error {
	if c == own {
		return c.fn(tx)
	}
	c.ch <- groupMsg{tx: tx}
	return <-c.ran
}

// call runs fn in tx, in the caller's goroutine, for the group's leader.
// A panic, which a damaged page read through the memory map raises too,
// becomes errFnPanicked: the group rolls back and fn runs again alone,
// where the panic (or the damage) reaches its caller as it would have.
// When fn ends the goroutine (runtime.Goexit, as a test's FailNow does),
// the leader is told so too, and the goroutine ends.
func (c *groupCall) call(tx Tx) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	normal := false
	defer func() {
		if normal {
			return
		}
		if recover() == nil {
			// runtime.Goexit goes on, and this call never returns.
			c.ran <- errFnPanicked
			return
		}
		err = errFnPanicked
	}()
	err = c.fn(tx)
	normal = true
	return err
}

// maxYield bounds how long a background write waits for the handle's
// writes to pause (see yieldToWrites): under a load that never pauses,
// it goes on at that pace, a merge step of 1,024 entries every 5 ms at
// least, several times what a saturated proxy's checkpoints make.
const maxYield = 5 * time.Millisecond

// yieldToWrites waits, up to maxYield or until ctx ends, until no write
// transaction of the handle runs or waits, and reports whether that came
// (paused): a step of the background merge then starts when it holds up
// no caller already waiting, rather than in the group of those that are.
func (b *Bolt) yieldToWrites(ctx context.Context) (paused bool) {
	b.ss.mu.Lock()
	s := b.ss.cur
	b.ss.mu.Unlock()
	if s == nil {
		return true
	}
	quiet := s.group.quietCh()
	if quiet == nil {
		return true
	}
	t := time.NewTimer(maxYield)
	defer t.Stop()
	select {
	case <-quiet:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
