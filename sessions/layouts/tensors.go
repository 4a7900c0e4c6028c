package layouts

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// tensors reads a layer's tensors by their names after the prefix, checking shapes.
type tensors struct {
	src    Source
	prefix string
	infos  map[string]arrays.Info
	read   []string // what was read, for the note
	names  []string // the full names of the tensors that make the layer (Result.Tensors)
	dtype  string
}

func newTensors(src Source, l Layer) *tensors {
	t := &tensors{src: src, prefix: l.Prefix, infos: map[string]arrays.Info{}}
	for _, in := range src.Arrays() {
		t.infos[in.Name] = in
	}
	return t
}

func (t *tensors) has(name string) bool {
	_, ok := t.infos[t.prefix+name]
	return ok
}

// get reads a tensor and fits it to shape, where -1 stands for any size: extra leading
// dimensions of size 1 are dropped and missing leading ones added, so that a (1, H, N, 2)
// parameter and an (H, N, 2) one read alike. want describes the shape in messages
// ("(H, N/2, 2)"). Sizes it settles are written back into shape.
func (t *tensors) get(name, want string, shape []int) (*arrays.Array, error) {
	full := t.prefix + name
	in, ok := t.infos[full]
	if !ok {
		return nil, invalidf("the tensor %q is missing: want shape %s", full, want)
	}
	got := fit(in.Shape, len(shape))
	ok = got != nil
	for i := range shape {
		if ok && shape[i] >= 0 && got[i] != shape[i] {
			ok = false
		}
	}
	if !ok {
		return nil, invalidf("the tensor %q has shape %s, want %s%s", full, arrays.ShapeString(in.Shape), want, sizes(shape))
	}
	a, err := t.src.Read(full)
	if err != nil {
		return nil, err
	}
	copy(shape, got)
	t.names = append(t.names, full)
	t.read = append(t.read, fmt.Sprintf("%s %s %s", name, arrays.ShapeString(in.Shape), in.DType))
	if t.dtype == "" {
		t.dtype = in.DType
	}
	return &arrays.Array{Shape: got, Data: a.Data}, nil
}

// sizes spells the sizes already settled: " with H = 4, N/2 = 8" is beyond what a plain
// shape can say, so it lists the known dimensions as "(4, 8, 2)".
func sizes(shape []int) string {
	if !slices.ContainsFunc(shape, func(d int) bool { return d >= 0 }) {
		return ""
	}
	parts := make([]string, len(shape))
	for i, d := range shape {
		if d < 0 {
			parts[i] = "·"
		} else {
			parts[i] = strconv.Itoa(d)
		}
	}
	return " = (" + strings.Join(parts, ", ") + ")"
}

// fit reshapes a shape to rank dimensions by dropping or adding leading ones; nil when
// dimensions other than ones would have to go.
func fit(shape []int, rank int) []int {
	for len(shape) > rank {
		if shape[0] != 1 {
			return nil
		}
		shape = shape[1:]
	}
	out := make([]int, rank)
	for i := range out {
		out[i] = 1
	}
	copy(out[rank-len(shape):], shape)
	return out
}

// shapeOf returns the shape of a tensor fitted to rank, or nil when it is missing or does
// not fit (for detection, which reads no data).
func shapeOf(infos map[string]arrays.Info, name string, rank int) []int {
	in, ok := infos[name]
	if !ok || !in.Supported {
		return nil
	}
	return fit(in.Shape, rank)
}

// complexAt reads element i of an array of (re, im) pairs.
func complexAt(a *arrays.Array, i int) complex128 {
	return complex(a.Data[2*i], a.Data[2*i+1])
}

// note joins what was read into Result.Note.
func (t *tensors) note(what string) string {
	return fmt.Sprintf("%s → %s", strings.Join(t.read, ", "), what)
}
