package filters

// What the external tests (package filters_test) call of the package's internals.

// MIMODiffClosedForm is MIMODiff by the closed form, whatever the layers' size.
func MIMODiffClosedForm(ref, approx *MIMO, length int) ([]float64, float64, error) {
	return mimoDiff(ref, approx, length, true)
}

// MIMOEnergyClosedForm is mimoEnergy: each output's energy from the finite-horizon Gramians.
var MIMOEnergyClosedForm = mimoEnergy
