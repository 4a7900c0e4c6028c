package filters

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestCheckAccuracy(t *testing.T) {
	ok := Report{From: FormDiagonal, To: FormTF, RelError: 3e-12}
	above := Report{From: FormDiagonal, To: FormTF, RelError: 2e-5}
	overflow := Report{From: FormDiagonal, To: FormTF, RelError: math.MaxFloat64}
	unstable := Report{From: FormDiagonal, To: FormTF, RelError: 4e-7, BecameUnstable: true}
	at := Report{From: FormDiagonal, To: FormTF, RelError: MaxRelError}
	// an overflow saturates at the largest float64, which is no error to print (the CLI said
	// "unstable (relative error 1.8e+308)" for hippo-legs order=16 channels=4 as tf)
	diverges := Report{From: FormDense, To: FormTF, RelError: math.MaxFloat64, BecameUnstable: true}
	for _, tc := range []struct {
		name    string
		reports []Report
		want    string // "" for nil
		channel int
	}{
		{"accurate", []Report{ok}, "", 0},
		{"at the limit", []Report{at, ok}, "", 0},
		{"above", []Report{above}, "diagonal → tf: relative error 2e-05 is above the documented 1e-06", -1},
		{"overflow", []Report{overflow}, "impulse response overflows", -1},
		{"worst channel", []Report{ok, above, overflow, ok}, "channel 2: the tf form's impulse response overflows (and 1 more channels)", 2},
		{"unstable, overflowing", []Report{diverges}, "dense → tf: the tf form of this stable filter is unstable (its impulse response overflows)", -1},
		{"unstable first", []Report{overflow, unstable}, "channel 1: the tf form of this stable filter is unstable (relative error 4e-07) (and 1 more channels)", 1},
	} {
		err := CheckAccuracy(tc.reports)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var ae *AccuracyError
		if !errors.As(err, &ae) || !errors.Is(err, ErrInaccurate) || ae.Channel != tc.channel || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (channel %v), want %q", tc.name, err, ae, tc.want)
		}
	}
}
