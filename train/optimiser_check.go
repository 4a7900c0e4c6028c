package train

import "fmt"

// CheckOptimiserSetting refuses a setting of the optimiser (its steps, learning rate, name,
// schedule, or the early-stopping tolerance) given for a spec fitted by variable projection
// (ByProjection), which takes no optimiser steps and would ignore it: ssmlab distill --steps,
// the workbench's steps=. given is the setting as the front end spells it ("--steps",
// "steps=200").
func (s *Spec) CheckOptimiserSetting(given string) error {
	if !s.ByProjection() {
		return nil
	}
	return fmt.Errorf("%s is a setting of the optimiser, which this recipe does not use: it fits by variable projection (%s), in no steps; the zeros, xavier and montel inits train with the optimiser", given, ProjectionRecipe)
}
