package tract

import (
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// infos returns the CommitInfo of commits hs, whose commits are cs,
// reading their texts in one call.
func infos(tx store.Tx, hs []Hash, cs []*dag.Commit, names map[Hash][]string) ([]*CommitInfo, error) {
	blobs := make([]Hash, len(cs))
	for i, c := range cs {
		blobs[i] = c.Blob
	}
	texts, err := store.ReadTexts(tx, blobs, hs)
	if err != nil {
		return nil, err
	}
	out := make([]*CommitInfo, len(cs))
	for i, c := range cs {
		out[i] = newInfo(hs[i], c, texts[i], names)
	}
	return out, nil
}
