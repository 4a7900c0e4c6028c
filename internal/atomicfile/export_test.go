package atomicfile

// SetTestHook installs a function WriteFile calls with its temporary file's name once it is
// created ("created") and once its content is written ("written").
func SetTestHook(f func(stage, tmp string)) { testHook = f }
