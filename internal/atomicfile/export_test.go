package atomicfile

// SetTestHook installs a function WriteFile calls with its temporary file's name once it is
// created ("created") and once its content is written ("written").
func SetTestHook(f func(stage, tmp string)) { testHook = f }

// SetAccessWrite stands in for access(2)'s answer to "may the caller write this file?", and
// returns a function that puts the real one back.
func SetAccessWrite(f func(path string) error) (restore func()) {
	old := accessWrite
	accessWrite = f
	return func() { accessWrite = old }
}
