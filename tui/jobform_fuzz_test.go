package tui

import (
	"errors"
	"strconv"
	"testing"

	"github.com/ssmlab/ssmlab/train"
)

// FuzzJobForm types fuzzed text into the distillation form's number fields and ladder
// (jobForm.read and spec, which FuzzKeys reaches only through a few characters): a refusal
// is a fieldError that points at a field, a spec it reads holds the numbers typed (the
// default's order where the order is left empty beside a ladder's orders, and steps left
// empty for a recipe fitted by variable projection), a spec it accepts
// is one train.Spec.ValidateDistillation accepts, and never with both an order and orders.
func FuzzJobForm(f *testing.F) {
	for _, s := range [][4]string{
		{"16", "100", "256", ""}, {"4", "0", "64", "4,8,16"}, {"0", "-1", "1", ""}, {" 8 ", "1e3", "0x10", "8;4"},
		{"99999999999999999999", "5", "32", ""}, {"8", "10", "32", "1,2,3,99999"}, {"", "10", "64", "2,4"}, {"", "10", "64", ""}, {"8", "", "64", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, order, steps, length, orders string) {
		def := train.DefaultSpec()
		def.Target.Length = 256
		fm := newJobForm("id", "k", "kernels", def, []train.BackendName{"cpu"})
		typed := map[string]string{"order": order, "steps": steps, "length": length, "orders": orders}
		for i := range fm.fields {
			if v, ok := typed[fm.fields[i].name]; ok {
				fm.fields[i].input.SetValue(v)
			}
		}
		fm.orderTyped = true // the order field is the user's (TestDistillFormOrderWithOrders has the form's own)
		s, err := fm.read()
		if err != nil {
			var fe fieldError
			if !errors.As(err, &fe) || fe.field < 0 || fe.field >= len(fm.fields) || err.Error() == "" {
				t.Fatalf("read: %v (%#v) does not point at a field", err, err)
			}
			return
		}
		ladderOnly := fm.ladderReplacesOrder()
		if ladderOnly && s.Order != def.Order {
			t.Fatalf("order left empty beside orders %q, read as %d", fm.fields[fm.field("orders")].value(), s.Order)
		}
		for name, got := range map[string]int{"order": s.Order, "steps": s.Steps, "length": s.Target.Length} {
			for _, fl := range fm.fields {
				defaulted := name == "order" && ladderOnly || name == "steps" && fl.value() == "" && got == def.Steps && s.ByProjection()
				if n, err := strconv.Atoi(fl.value()); fl.name == name && !defaulted && (err != nil || n != got) {
					t.Fatalf("%s typed %q, read as %d", name, fl.value(), got)
				}
			}
		}
		s, ladder, err := fm.spec()
		if err != nil {
			if err.Error() == "" {
				t.Fatal("spec: an empty error")
			}
			return // a fieldError or Spec.ValidateDistillation's
		}
		if err := s.ValidateDistillation(1, s.Target.Length); err != nil {
			t.Fatalf("the form accepted a spec ValidateDistillation refuses: %v", err)
		}
		if ladder != nil && (s.Order != ladder[len(ladder)-1] || !ladderOnly) {
			t.Fatalf("a ladder %v with order %d (the order field %q)", ladder, s.Order, fm.fields[fm.field("order")].value())
		}
	})
}
