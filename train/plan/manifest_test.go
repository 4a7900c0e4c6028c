package plan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
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

// TestSpecChanges: a layer's record names what of the recipe its fits ran with differs from
// what every layer of the job ran with (UnitSpec against JobSpec, which the manifest's options
// record): the real positive poles of an S4D layer built with is_real; nothing for a recipe
// that takes none (the optimiser's, which places no poles of a set and keeps the rtf form it
// names). The diagonal form an rtf fit by variable projection keeps is the job's, in the
// options alone: every layer's record said "form": "diagonal". The options' spec with the
// record's keys over it is what the layer's fits ran with.
func TestSpecChanges(t *testing.T) {
	modal := train.DefaultSpec()
	modal.Model = train.ModelModal
	positive := Unit{Prefix: "layers.1.layer.", Hi: 3, Length: 64, Order: 4, Poles: train.PolesPositive}
	for _, c := range []struct {
		name     string
		spec     train.Spec
		unit     Unit
		want     string
		jobsForm filters.Form
	}{
		{"rtf by projection", train.DefaultSpec(), Unit{Prefix: "l.", Hi: 3}, `null`, filters.FormDiagonal},
		{"rtf by projection, is_real", train.DefaultSpec(), positive, `{"poles":"positive"}`, filters.FormDiagonal},
		{"modal, is_real", modal, positive, `{"poles":"positive"}`, ""},
		{"modal", modal, Unit{Prefix: "l.", Hi: 3}, `null`, ""},
		{"the optimiser's recipe, is_real", train.PaperSpec(), positive, `null`, ""},
	} {
		got, err := SpecChanges(c.spec, c.unit)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, err := json.Marshal(got)
		if err != nil || string(b) != c.want {
			t.Errorf("%s: %s (%v), want %s", c.name, b, err, c.want)
		}
		// The options as the manifest records them, with the record's keys over them, are
		// what the unit was fitted with.
		applied := Options{Spec: c.spec}.Applied(true).Spec
		if applied.Form != c.jobsForm {
			t.Errorf("%s: the manifest's options record form %q, want %q", c.name, applied.Form, c.jobsForm)
		}
		var merged map[string]json.RawMessage
		if data, err := json.Marshal(applied); err != nil || json.Unmarshal(data, &merged) != nil {
			t.Fatal(data, err)
		}
		for k, v := range got {
			merged[k] = v
		}
		fitted := UnitSpec(c.spec, c.unit, c.spec.Order).AsFitted()
		var want map[string]json.RawMessage
		if data, err := json.Marshal(fitted); err != nil || json.Unmarshal(data, &want) != nil {
			t.Fatal(data, err)
		}
		delete(merged, "target")
		delete(want, "target")
		if !reflect.DeepEqual(normal(t, merged), normal(t, want)) {
			t.Errorf("%s: options with the layer's keys %s, fitted with %s", c.name, normal(t, merged), normal(t, want))
		}
	}
}

// normal is m as JSON with sorted keys, for comparing.
func normal(t *testing.T, m map[string]json.RawMessage) string {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestManifestReadsWithoutLayerSpec: a manifest written before layers recorded their spec's
// changes reads, each layer's Spec nil (the options' spec whole); one with them reads them.
func TestManifestReadsWithoutLayerSpec(t *testing.T) {
	const old = `{"format":"ssmlab-distill-manifest/1","input":{"name":"m.pt","size":1,"sha256":"00"},"options":{"layout":"auto","chunk":64,"spec":{"model":"rtf","order":4}},"layers":[{"prefix":"l.","method":"fit","layout":"s4d","to_layout":"s4d","dtype":"F32","length":64,"read_back_error":1e-7,"tensors":["l.kernel.A_real"],"channels":[]}]}`
	var m Manifest
	if err := json.Unmarshal([]byte(old), &m); err != nil || len(m.Layers) != 1 || m.Layers[0].Spec != nil {
		t.Fatalf("an older manifest: %+v, %v", m, err)
	}
	m.Layers[0].Spec = map[string]json.RawMessage{"poles": json.RawMessage(`"positive"`)}
	data, err := json.Marshal(m.Stable())
	if err != nil || !bytes.Contains(data, []byte(`"spec":{"poles":"positive"}`)) {
		t.Fatalf("written: %s, %v", data, err)
	}
	var back Manifest
	if err := json.Unmarshal(data, &back); err != nil || string(back.Layers[0].Spec["poles"]) != `"positive"` {
		t.Errorf("read back: %+v, %v", back.Layers, err)
	}
}
