package main

import "runtime/debug"

// oneTurnMemoryLimit bounds the heap of a process that runs one turn
// with the collector off (see oneTurnMemory): past it, the collector runs
// as the runtime's memory limit makes it.
const oneTurnMemoryLimit = 1 << 30

// oneTurnMemory sets the garbage collector of a process that runs one
// turn and exits: off, under a memory limit of oneTurnMemoryLimit. Such
// a process reads a conversation's context (at 100,000 messages, about
// 33 MB of texts in 100,000 messages) and writes the request of it:
// nearly all it allocates stays live until it exits, so each collection
// on the way marked it all again and freed little (at 100,000 messages
// the collector took about half of what opening and compiling took; see
// docs/performance.md). A GOGC or GOMEMLIMIT in the environment is the
// user's choice, and is left to the runtime.
func oneTurnMemory(getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(oneTurnMemoryLimit)
	debug.SetGCPercent(-1)
}
