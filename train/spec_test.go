package train

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestCheckSettingsNamesTheField: every setting CheckSettings refuses is a FieldError naming
// its key in the job file and the other settings that make it wrong, for the front ends to
// name their own field or flag; a tolerance of 1 or more, a relative error the zero filter
// meets, is refused.
func TestCheckSettingsNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		change func(*Spec)
		field  string
		with   []string
	}{
		{func(s *Spec) { s.Order = -1 }, "order", nil},
		{func(s *Spec) { s.Model, s.Init = ModelModal, InitMontel }, "init", []string{"model"}},
		{func(s *Spec) { s.Model, s.Constraint = ModelModal, ConstraintL1Montel }, "constraint", []string{"model"}},
		{func(s *Spec) { s.MaxRadius = 1.5 }, "max_radius", []string{"constraint"}},
		{func(s *Spec) { s.Optimizer.LR = 0 }, "optimizer.lr", nil},
		{func(s *Spec) { s.Optimizer.Name = "sgd" }, "optimizer.name", nil},
		{func(s *Spec) { s.Tol = -1 }, "tol", nil},
		{func(s *Spec) { s.Tol = 1 }, "tol", nil},
		{func(s *Spec) { s.Steps = -1 }, "steps", nil},
		{func(s *Spec) { s.Refine = -1 }, "refine", nil},
		{func(s *Spec) { s.Loss = "l3" }, "loss", nil},
		{func(s *Spec) { s.Init, s.Poles = InitZeros, PolesReal }, "poles", []string{"model", "init", "loss", "constraint"}},
	} {
		s := DefaultSpec()
		tc.change(&s)
		err := s.CheckSettings()
		fe := (*FieldError)(nil)
		if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) || fe.Field != tc.field || !slices.Equal(fe.With, tc.with) {
			t.Errorf("%s: got %#v (%v), want a FieldError of %s with %v", tc.field, fe, err, tc.field, tc.with)
		}
		if err2 := s.Validate(1, 64); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%s: Validate says %v, CheckSettings %v", tc.field, err2, err)
		}
	}
	s := DefaultSpec()
	s.Tol = 0.5
	if err := s.CheckSettings(); err != nil {
		t.Errorf("tol 0.5: %v", err)
	}
}

// TestCheckOrderOrOrders: one order beside a ladder's orders is refused in the front end's
// words (the workbench's :distill order=4 orders=4,8 ran the ladder and dropped the order).
func TestCheckOrderOrOrders(t *testing.T) {
	for _, tc := range []struct {
		order, orders bool
		want          string
	}{
		{false, false, ""}, {true, false, ""}, {false, true, ""},
		{true, true, "orders= and order= both give the order: orders= fits a ladder of orders, order= one"},
	} {
		err := CheckOrderOrOrders(tc.order, tc.orders, "order=", "orders=")
		if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
			t.Errorf("order %v, orders %v: %v, want %q", tc.order, tc.orders, err, tc.want)
		}
	}
}

// TestAsFittedDropsTheOptimiser: a spec fitted by variable projection (the default recipe,
// at any order, 0 being a whole-model distill's order chosen per channel) is recorded
// without the optimiser's settings, which that fit does not use, and its JSON names no
// optimizer; a recipe the optimiser trains keeps them.
func TestAsFittedDropsTheOptimiser(t *testing.T) {
	for _, order := range []int{0, 8} {
		s := DefaultSpec()
		s.Order, s.Tol = order, 1e-3
		got := s.AsFitted()
		want := s
		want.Optimizer, want.Steps, want.Tol = Optim{}, 0, 0
		if !reflect.DeepEqual(got, want) {
			t.Errorf("order %d by projection: %+v, want %+v", order, got, want)
		}
		b, err := json.Marshal(got)
		if err != nil || strings.Contains(string(b), "optimizer") || !strings.Contains(string(b), `"steps":0`) {
			t.Errorf("order %d by projection: %s (%v)", order, b, err)
		}
	}
	paper := PaperSpec()
	if got := paper.AsFitted(); !reflect.DeepEqual(got, paper) {
		t.Errorf("the optimiser's recipe: %+v, want it as given", got)
	}
}
