package dag

import "bytes"

// ShapeKey is the metadata key under which a commit keeps the shape of a
// message that is more than a role and a text (see "Message shapes" in
// docs/encoding.md).
const ShapeKey = "shape"

// shapeKeyJSON is ShapeKey as it appears in canonical metadata.
var shapeKeyJSON = []byte(`"` + ShapeKey + `":`)

// MayHoldShape reports whether canonical metadata may hold a message shape
// (Header.Shaped): whether its key appears in it. A reader that has the
// metadata already decides with it whether to look for a shape at all.
func MayHoldShape(meta []byte) bool { return bytes.Contains(meta, shapeKeyJSON) }
