//go:build linux

package store

import (
	"context"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The queue locks are open-file-description byte-range locks (fcntl
// F_OFD_SETLK) on two bytes far past the end of any real repository file:
// record locks need no data at the offsets they cover, and they are
// independent of the flock that bbolt takes, so the two never interfere.
// Being tied to the open file, not the process, they also order two handles
// of one process, exactly like two processes.
const (
	gateByte = 1 << 62
	dataByte = gateByte + 1
)

// queueLock takes the data lock on f, shared or exclusive, through the
// gate: a waiter first holds the gate, then waits for the data lock, then
// lets the gate go. Only the gate holder ever waits for the data lock, so
// when a session ends the lock passes to the process that queued first at
// the gate, not to whoever happens to run first; and a new reader queues
// behind a waiting writer instead of overtaking it. Waits happen in the
// kernel, which wakes a waiter as soon as the lock is free.
//
// It gives up at deadline with errLockTimeout, and when ctx ends with ctx's
// error. On any error f is closed (or, after a timeout, closed by the wait
// that goes on in the background as soon as it is granted): the caller must
// not use f again.
func queueLock(ctx context.Context, f *os.File, exclusive bool, deadline time.Time) error {
	typ := int16(unix.F_RDLCK)
	if exclusive {
		typ = unix.F_WRLCK
	}
	// Fast path: nobody queued, nobody holding.
	fail := func(err error) error {
		f.Close()
		return err
	}
	gate := ofdLock(f, unix.F_OFD_SETLK, typ, gateByte)
	if gate == nil {
		if err := ofdLock(f, unix.F_OFD_SETLK, typ, dataByte); err == nil {
			if err := ofdLock(f, unix.F_OFD_SETLK, unix.F_UNLCK, gateByte); err != nil {
				return fail(err)
			}
			return nil
		} else if !isWouldBlock(err) {
			return fail(err)
		}
	} else if !isWouldBlock(gate) {
		return fail(gate)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if !time.Now().Before(deadline) {
		return fail(errLockTimeout)
	}
	haveGate := gate == nil
	// Wait in the kernel, in a goroutine so that the caller can give up.
	const (
		waiting int32 = iota
		granted
		abandoned
	)
	var state atomic.Int32
	done := make(chan error, 1)
	go func() {
		err := error(nil)
		if !haveGate {
			err = ofdLock(f, unix.F_OFD_SETLKW, typ, gateByte)
		}
		if err == nil {
			err = ofdLock(f, unix.F_OFD_SETLKW, typ, dataByte)
		}
		if err == nil {
			err = ofdLock(f, unix.F_OFD_SETLK, unix.F_UNLCK, gateByte)
		}
		if !state.CompareAndSwap(waiting, granted) {
			f.Close() // abandoned: closing releases whatever was granted
			return
		}
		done <- err
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		if state.CompareAndSwap(waiting, abandoned) {
			return errLockTimeout
		}
		err = <-done
	case <-ctx.Done():
		if state.CompareAndSwap(waiting, abandoned) {
			return ctx.Err()
		}
		err = <-done
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// defaultIdleGrace is DefaultIdleGrace here (see there).
const defaultIdleGrace = 10 * time.Millisecond

// queued reports who, if anyone, holds the gate through another open file
// (of this or another process): who waits for the data lock f holds. A
// writer holds the gate exclusively, readers share it, so the gate's lock
// type tells which.
func queued(f *os.File) waiter {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: gateByte, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return noWaiter
	}
	switch lk.Type {
	case unix.F_RDLCK:
		return readerWaits
	case unix.F_WRLCK:
		return writerWaits
	}
	return noWaiter
}

// unlockQueue drops the queue locks on f. Closing f is not enough when
// bbolt panicked after mapping the file: the mapping keeps the open file
// description, and with it the locks, alive.
func unlockQueue(f *os.File) {
	_ = ofdLock(f, unix.F_OFD_SETLK, unix.F_UNLCK, gateByte)
	_ = ofdLock(f, unix.F_OFD_SETLK, unix.F_UNLCK, dataByte)
}

func ofdLock(f *os.File, cmd int, typ int16, off int64) error {
	lk := unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: off, Len: 1}
	for {
		err := unix.FcntlFlock(f.Fd(), cmd, &lk)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func isWouldBlock(err error) bool {
	return errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES)
}

// queueHeld reports whether another open file holds or queues for the
// queue locks on f's file.
func queueHeld(f *os.File) bool {
	for _, off := range []int64{gateByte, dataByte} {
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: off, Len: 1}
		if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil || lk.Type != unix.F_UNLCK {
			return true
		}
	}
	return false
}
