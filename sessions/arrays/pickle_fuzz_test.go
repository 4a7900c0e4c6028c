package arrays

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzUnpickle runs the restricted unpickler on pickles alone (the torch archive around them
// makes FuzzTorch slow to reach the opcodes): no panic, no unbounded work, and every failure
// a one-line ErrInvalid or ErrUnsupported. Storages are stubbed, so every view the pickle
// builds is checked against the numel it declares.
func FuzzUnpickle(f *testing.F) {
	for _, name := range []string{"state.pt", "module.pt", "lightning.ckpt"} {
		data, err := os.ReadFile(filepath.Join("../../testdata/golden/torch", name))
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
				f.Add(b)
			}
		}
	}
	f.Add([]byte("cos\nsystem\n(S'echo pwned'\ntR."))
	f.Add([]byte("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x8c\x04eval\x93\x8c\x0bprint('hi')\x85R."))
	f.Add([]byte("\x80\x02]q\x00(h\x00h\x00e."))
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
			w := walker{t: tt, seen: map[any]bool{}}
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
