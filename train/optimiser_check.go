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

// AsFitted returns the spec as a distillation of it fits: where that is by variable
// projection (ByProjection, judged at MinDistillOrder where Order is 0, a whole-model
// distill's order chosen per channel), without the optimiser's settings (Optimizer, Steps,
// Tol: those CheckOptimiserSetting refuses), which it does not use (a zero Optimizer is
// left out of the JSON); s where the optimiser trains. A distilled checkpoint's manifest
// records it, so that it does not name Adam and 100 steps for a fit that took none.
func (s Spec) AsFitted() Spec {
	r := s
	r.Order = max(r.Order, MinDistillOrder)
	if r.ByProjection() {
		s.Optimizer, s.Steps, s.Tol = Optim{}, 0, 0
	}
	return s
}
