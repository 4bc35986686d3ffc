package store_test

import (
	"testing"

	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/storetest"
)

func TestBolt_Conformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return createBolt(t) })
}
