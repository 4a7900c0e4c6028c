package arrays

import (
	"math"
	"runtime"
	"strings"
	"testing"
)

// TestUnpackAllocates: a packed array decodes into its values with little more than the
// values' memory (a copy of the base64 text and of its bytes were each as large), and reads
// back what was packed, with or without a line break in its text.
func TestUnpackAllocates(t *testing.T) {
	v := make([]float64, 1<<20)
	for i := range v {
		v[i] = math.Sin(float64(i)) * math.Exp(float64(i%50)-25)
	}
	a, err := New([]int{1024, 1024}, v)
	if err != nil {
		t.Fatal(err)
	}
	p := Pack(a)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := p.Unpack()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 9<<20 {
		t.Errorf("unpacking 8 MiB of values allocated %.1f MiB", float64(got)/(1<<20))
	}
	// A line break (which base64 skips) in mid-text, off the chunks' quanta.
	broken := p
	broken.Data = p.Data[:len(p.Data)/2+1] + "\r\n" + p.Data[len(p.Data)/2+1:]
	c, err := broken.Unpack()
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if b.Data[i] != v[i] || c.Data[i] != v[i] {
			t.Fatalf("value %d: %v and %v, packed %v", i, b.Data[i], c.Data[i], v[i])
		}
	}
	bad := p
	bad.Data = p.Data[:len(p.Data)/2] + "*" + p.Data[len(p.Data)/2+1:]
	if _, err := bad.Unpack(); err == nil || !strings.Contains(err.Error(), "illegal base64 data at input byte") {
		t.Errorf("a bad character: %v", err)
	}
}
