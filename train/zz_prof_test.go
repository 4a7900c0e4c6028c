package train

import (
	"context"
	"os"
	"testing"

	"github.com/ssmlab/ssmlab/internal/cputime"
)

// scratch: never commit
func TestZZProf(t *testing.T) {
	set := os.Getenv("ZZ_SET")
	if set == "" {
		t.Skip()
	}
	_, fams := qualityTargets(t, 16)
	for i := 0; i < 3; i++ {
		t0 := cputime.Process()
		res, err := Run(context.Background(), Job{Spec: withOrder(DefaultSpec(), 64), Targets: fams[set]}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s n=64 mean %.6g cpu %.2fs", set, res.Report.MeanRelError, (cputime.Process() - t0).Seconds())
	}
}
