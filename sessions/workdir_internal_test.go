package sessions

import (
	"encoding/json"
	"testing"

	"github.com/ssmlab/ssmlab/train/plan"
)

// TestUnitRecordCounts: a work directory's record that does not match its unit says so in
// words of the counts: a unit of one channel read "0 filters and 1 records for 1 channels".
func TestUnitRecordCounts(t *testing.T) {
	one := plan.Unit{Prefix: "l.", Lo: 0, Hi: 1, Length: 64, Order: 2}
	two := plan.Unit{Prefix: "l.", Lo: 0, Hi: 2, Length: 64, Order: 2, MIMO: true}
	shared := plan.Unit{Prefix: "l.", Lo: 0, Hi: 2, Length: 64, Order: 2, Shared: true}
	for _, tc := range []struct {
		want plan.Unit
		rec  unitRecord
		msg  string
	}{
		{one, unitRecord{Unit: one, Filters: []json.RawMessage{}, Channels: []plan.ChannelRecord{{}}}, "holds 0 filters and 1 record for 1 channel"},
		{two, unitRecord{Unit: two, MIMO: &plan.MIMORecord{Outputs: 1}}, "holds a reduced layer of 1 output with 0 filters and 0 records for 2 channels"},
		{shared, unitRecord{Unit: shared, Filters: make([]json.RawMessage, 2), Channels: make([]plan.ChannelRecord, 2),
			Shared: &plan.SharedRecord{Group: []int{0}}}, "holds shared modes of 1 channel for 2"},
	} {
		tc.rec.Format, tc.rec.Key = UnitFormat, "k"
		tc.rec.Sum = tc.rec.checksum()
		if _, err := tc.rec.decode("k", tc.want); err == nil || err.Error() != tc.msg {
			t.Errorf("%s: %v, want %q", tc.want.ID(), err, tc.msg)
		}
	}
}
