//go:build !linux

package store

import bolt "go.etcd.io/bbolt"

// dropMapped does nothing here: the pages a read touched stay resident
// until the map is dropped (see resident_linux.go).
func dropMapped(*bolt.Tx) {}
