package sessions

// SetSaveHook installs a function Save calls at each of its stages ("encoded", "backed-up",
// "written"), for the crash tests; nil removes it.
func SetSaveHook(f func(stage string)) { saveHook = f }

// Abandon drops the session's hold on its autosave file without removing it, as a killed
// process does: ListAutosaves then offers it.
func Abandon(s *Session) {
	s.auto.mu.Lock()
	defer s.auto.mu.Unlock()
	s.auto.release(false)
}
