package tui

import (
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// TestLayerChoiceSaysProblem: a layer listed with a problem (its channel-bearing tensor
// missing) is offered with import's error, not as "0 channels".
func TestLayerChoiceSaysProblem(t *testing.T) {
	const why = `the tensor "kernel.C" is missing`
	cs := layerChoices([]layouts.Layer{
		{Prefix: "a.", Layout: layouts.S4D, Order: 8, ComplexModes: 4, DType: "float32", Problem: why},
		{Prefix: "b.", Layout: layouts.S4D, Channels: 2, Order: 8, ComplexModes: 4, DType: "float32"},
	})
	if !strings.Contains(cs[0].Label, why) || strings.Contains(cs[0].Label, "0 channels") {
		t.Errorf("label %q, want the problem", cs[0].Label)
	}
	if !strings.Contains(cs[1].Label, "2 channels") {
		t.Errorf("label %q", cs[1].Label)
	}
}
