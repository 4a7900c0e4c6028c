package plan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ssmlab/ssmlab/train"
)

// TestManifestOptionsLeaveOutTarget: a manifest's options are written as Options are, keys in
// the same order, but for the spec's target, which no fit of a job uses: they wrote
// "target": {}. Read back, they are the options applied.
func TestManifestOptionsLeaveOutTarget(t *testing.T) {
	o := Options{Layout: "auto", Length: 64, Order: 8, Chunk: 64, Spec: train.DefaultSpec()}
	o.Spec.Order = 8
	applied := o.Applied(true)
	plain, err := json.Marshal(Options(applied))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(plain, []byte(`"spec":{"target":{},`)) {
		t.Fatalf("the test's premise: Options write the spec's target first, as {}: %s", plain)
	}
	got, err := json.Marshal(Manifest{Options: applied})
	if err != nil {
		t.Fatal(err)
	}
	want := `"options":` + string(bytes.Replace(plain, []byte(`"target":{},`), nil, 1))
	if !bytes.Contains(got, []byte(want)) {
		t.Errorf("manifest %s, want its options %s", got, want)
	}
	var back Manifest
	if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back.Options, applied) {
		t.Errorf("read back: %+v, %v; want %+v", back.Options, err, applied)
	}
}
