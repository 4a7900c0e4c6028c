package train

import (
	"errors"
	"strings"
	"testing"
)

// TestVocabularies: every listed name parses to itself, and an unknown one is an ErrInvalid,
// a FieldError of the setting, naming the choices, as Spec.Validate words it.
func TestVocabularies(t *testing.T) {
	check := func(what string, names []string, parse func(string) error) {
		for _, n := range names {
			if err := parse(n); err != nil {
				t.Errorf("%s %q: %v", what, n, err)
			}
		}
		err := parse("nope")
		fe := (*FieldError)(nil)
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &fe) || fe.Field != what || !strings.Contains(err.Error(), what+` "nope" is unknown`) || !strings.Contains(err.Error(), names[len(names)-1]) {
			t.Errorf("%s: %v", what, err)
		}
	}
	check("model", Names(Models), func(s string) error { _, err := ParseModel(s); return err })
	check("init", Names(Inits), func(s string) error { _, err := ParseInit(s); return err })
	check("constraint", Names(Constraints), func(s string) error { _, err := ParseConstraint(s); return err })
	check("loss", Names(Losses), func(s string) error { _, err := ParseLoss(s); return err })
	check("backend", Names(BackendNames), func(s string) error { _, err := ParseBackend(s); return err })
	if got := Choices(Models); got != "rtf, modal or rotation" {
		t.Errorf("Choices(Models) = %q", got)
	}
	s := DefaultSpec()
	s.Loss = "l3"
	if err := s.Validate(1, 64); err == nil || !strings.Contains(err.Error(), "want mse, relative or freq") {
		t.Errorf("Validate: %v", err)
	}
}
