package sessions

// SetSaveHook installs a function Save calls at each of its stages ("encoded", "backed-up",
// "written"), for the crash tests; nil removes it.
func SetSaveHook(f func(stage string)) { saveHook = f }
