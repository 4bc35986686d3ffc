package dag

// ShapeKey is the metadata key under which a commit keeps the shape of a
// message that is more than a role and a text (see "Message shapes" in the
// package documentation).
const ShapeKey = "shape"

// shapeKeyJSON is ShapeKey as it appears in canonical metadata.
var shapeKeyJSON = []byte(`"` + ShapeKey + `":`)
