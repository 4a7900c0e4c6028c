//go:build race

package sessions_test

// raceEnabled is set when the tests run with -race, which slows the crash tests' helper
// processes down about tenfold.
const raceEnabled = true
