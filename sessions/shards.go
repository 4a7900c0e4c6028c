package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// ShardIndexError is the error of reading a sharded Hugging Face checkpoint's index
// (model.safetensors.index.json, pytorch_model.bin.index.json: JSON whose "weight_map" names
// the file of each tensor) as a model file: its tensors are in its shards, which import,
// import --list and distill read one at a time. Shards are the files it names, in order.
type ShardIndexError struct{ Shards []string }

func (e *ShardIndexError) Error() string {
	return fmt.Sprintf("the index of a sharded checkpoint, not an array file: its %s (%s) each hold some of its tensors, and each shard is read or distilled on its own (ssmlab import SHARD --list, ssmlab distill SHARD -o OUT)",
		plural.Count(len(e.Shards), "shard file"), plural.First(e.Shards, 4, " "))
}

func (e *ShardIndexError) Unwrap() error { return ErrInvalid }

// shardIndex returns the *ShardIndexError of data, JSON of a sharded checkpoint's index
// (an object with a "weight_map" of tensor names to files), or nil for any other data.
func shardIndex(data []byte) error {
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if json.Unmarshal(data, &idx) != nil || len(idx.WeightMap) == 0 {
		return nil
	}
	var shards []string
	for _, f := range idx.WeightMap {
		shards = append(shards, f)
	}
	slices.Sort(shards)
	return &ShardIndexError{Shards: slices.Compact(shards)}
}

// asShardIndex is the *ShardIndexError of the file at path, prefixed with path, where
// opening it as an array file failed with err for a format no reader has
// (arrays.ErrUnsupported) and it is a sharded checkpoint's index; else nil.
func asShardIndex(path string, err error) error {
	if !errors.Is(err, arrays.ErrUnsupported) {
		return nil
	}
	data, err := userfile.ReadFile(path)
	if err != nil {
		return nil
	}
	if ierr := shardIndex(data); ierr != nil {
		return fmt.Errorf("%s: %w", path, ierr)
	}
	return nil
}
