package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// terminateDescendants sends SIGTERM to every process descended from pid
// (a pager a shell runs, and what it runs), read from /proc.
func terminateDescendants(pid int) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid …": comm may hold anything but the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		child, err1 := strconv.Atoi(strings.Fields(s[:i])[0])
		parent, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			children[parent] = append(children[parent], child)
		}
	}
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			walk(c)
			_ = syscall.Kill(c, syscall.SIGTERM)
		}
	}
	walk(pid)
}
