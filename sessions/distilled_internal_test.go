package sessions

import (
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// TestLayerFitsMissingCount: a layer whose results give fewer filters than its channels is
// refused counting them with plural.Count; a layer of one channel read "0 of its 1 channels
// fitted".
func TestLayerFitsMissingCount(t *testing.T) {
	for _, tc := range []struct {
		channels int
		want     string
	}{
		{1, `layer "x.": 0 of its 1 channel fitted`},
		{3, `layer "x.": 0 of its 3 channels fitted`},
	} {
		l := ModelLayer{Layer: layouts.Layer{Prefix: "x.", Layout: layouts.S4D, Channels: tc.channels}}
		if _, _, _, err := layerFits(l, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d channels, none fitted: %v, want %q", tc.channels, err, tc.want)
		}
	}
}

// TestSharedModesNoteCounts: the note of a layer fitted with its SSMs' modes shared counts
// its channels and modes with plural.Count; SSMs of one mode each read "1 modes each".
func TestSharedModesNoteCounts(t *testing.T) {
	for _, tc := range []struct {
		ssms, channels, modes int
		want                  string
	}{
		{1, 2, 1, "(n_ssm 1 over 2 channels, 1 mode each)"},
		{2, 8, 4, "(n_ssm 2 over 8 channels, 4 modes each)"},
	} {
		if got := sharedModesNote("x.", tc.ssms, tc.channels, tc.modes); !strings.HasSuffix(got, tc.want) {
			t.Errorf("%d SSMs over %d channels of %d modes: %q, want it ending %q", tc.ssms, tc.channels, tc.modes, got, tc.want)
		}
	}
}
