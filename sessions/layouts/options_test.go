package layouts

import "testing"

// TestOptionErrorIsStable: with several wrong options the error names the same one every
// time (map order would pick one at random).
func TestOptionErrorIsStable(t *testing.T) {
	o := Options{Values: map[string]string{"zeta": "1", "alpha": "1", "mid": "1", "omega": "1"}}
	for range 50 {
		if err := o.check(LRU); err == nil || err.Error() != `unknown option "alpha"` {
			t.Fatalf("got %v, want the alphabetically first unknown option named", err)
		}
	}
}
