package arrays

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/internal/fuzzcorpus"
)

// FuzzUnpickle runs the restricted unpickler on pickles alone (the torch archive around them
// makes FuzzTorch slow to reach the opcodes): no panic, no unbounded work, and every failure
// a one-line ErrInvalid or ErrUnsupported. Storages are stubbed, so every view the pickle
// builds is checked against the numel it declares.
func FuzzUnpickle(f *testing.F) {
	// The pickles of the small torch.save files (225 to 365 bytes; those of the files of
	// several tensors are 390 to 760, and large seeds are slow to minimise).
	paths, err := filepath.Glob("../../testdata/golden/torch/small_*")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no small torch.save files: %v", err)
	}
	var seeds [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			f.Fatal(err)
		}
		for _, zf := range zr.File {
			if strings.HasSuffix(zf.Name, "/data.pkl") {
				b, err := readEntry(zf, maxPickle)
				if err != nil {
					f.Fatal(err)
				}
				seeds = append(seeds, b)
			}
		}
	}
	seeds = append(seeds, []byte("cos\nsystem\n(S'echo pwned'\ntR."),
		[]byte("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x8c\x04eval\x93\x8c\x0bprint('hi')\x85R."),
		[]byte("\x80\x02]q\x00(h\x00h\x00e."))
	fuzzcorpus.CheckSmall(f, "FuzzUnpickle", seeds)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		hooks := pickleHooks{global: torchGlobal, call: torchCall, persistent: func(pid any) (any, error) {
			tup, ok := pid.(*pyTuple)
			if !ok || len(tup.items) != 5 {
				return nil, invalidf("bad pid")
			}
			d, ok1 := tup.items[1].(torchDType)
			n, ok2 := tup.items[4].(int64)
			if !ok1 || !ok2 || n < 0 || n > 1<<20 {
				return nil, invalidf("bad pid")
			}
			return &torchStorage{key: "0", dtype: string(d), numel: n}, nil
		}}
		v, err := unpickle(data, hooks)
		if err == nil {
			tt := &Torch{tensors: map[string]*torchTensor{}}
			w := walker{t: tt, seen: map[any]bool{}, clean: map[any]bool{}}
			err = w.walk(v, "", 0)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error wraps neither ErrInvalid nor ErrUnsupported: %v", err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error spans lines: %q", err)
			}
		}
	})
}

// TestUnpickleSets: sets (a checkpoint's hyperparameters may hold one) unpickle as opaque
// values, which hold no tensor and are read around.
func TestUnpickleSets(t *testing.T) {
	// pickle.dumps({'tags': {'a', 'b'}, 'f': frozenset(['c'])}, protocol=4)
	data := []byte("\x80\x04\x95#\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x04tags\x94\x8f\x94(\x8c\x01b\x94\x8c\x01a\x94\x90\x8c\x01f\x94(\x8c\x01c\x94\x91\x94u.")
	v, err := unpickle(data, pickleHooks{global: torchGlobal, call: torchCall})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := v.(*pyDict)
	if !ok || len(d.keys) != 2 {
		t.Fatalf("%s, want a dict of two items", typeName(v))
	}
	tt := &Torch{tensors: map[string]*torchTensor{}}
	w := walker{t: tt, seen: map[any]bool{}, clean: map[any]bool{}}
	if err := w.walk(v, "", 0); err != nil || tt.skipped != `"builtins.set"` {
		t.Errorf("walk: %v, skipped %s; want the set read around", err, tt.skipped)
	}
}
