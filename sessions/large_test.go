package sessions_test

import (
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// TestUnmarshalLargeAllocates: a session holding 16 MB of numbers (a packed array of 21 MB
// of base64) decodes with little more than the numbers' memory besides its text (before,
// encoding/json's reader buffered the whole base64 token and copied it into a string: five
// times the numbers), reads back the same values, and a syntax error after the array is
// placed exactly as in a session without lifting.
func TestUnmarshalLargeAllocates(t *testing.T) {
	k := make([]float64, 1<<21)
	for i := range k {
		k[i] = math.Sin(float64(i)*0.37) * math.Exp(-float64(i%4096)/900)
	}
	a, err := arrays.New([]int{512, 4096}, k)
	if err != nil {
		t.Fatal(err)
	}
	s := sessions.New()
	if _, err := s.AddTarget(sessions.Target{Name: "big", Kernels: a}); err != nil {
		t.Fatal(err)
	}
	data, err := sessions.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	back, err := sessions.Unmarshal(data)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := after.TotalAlloc-before.TotalAlloc, uint64(8*len(k)); got > want*3/2 {
		t.Errorf("decoding %.0f MB of numbers allocated %.0f MB", float64(want)/1e6, float64(got)/1e6)
	}
	got := back.Targets[0].Kernels.Data
	for i := range k {
		if got[i] != k[i] {
			t.Fatalf("value %d: %v, want %v", i, got[i], k[i])
		}
	}
	// A syntax error on the array's line, after it: the same line and column as the text
	// parsed as it is would give (the lifted text is parsed again on an error).
	text := string(data)
	end := strings.Index(text, `"data": "`)
	end = strings.Index(text[end+9:], `"`) + end + 9 + 1
	bad := text[:end] + " x" + text[end:]
	_, err = sessions.Unmarshal([]byte(bad))
	line := 1 + strings.Count(bad[:end], "\n")
	col := 1 + len(bad[strings.LastIndex(bad[:end], "\n")+1:end]) + 1
	if want := "line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it at %s", err, want)
	}
}
