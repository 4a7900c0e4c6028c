package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
)

// StateDir returns ssmlab's directory for state worth keeping between runs:
// $XDG_STATE_HOME/ssmlab, or ~/.local/state/ssmlab when XDG_STATE_HOME is unset or not an
// absolute path (XDG Base Directory Specification).
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ssmlab"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "ssmlab"), nil
}

// AutosaveDir returns the directory of autosave files, StateDir()/autosave.
func AutosaveDir() (string, error) {
	d, err := StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "autosave"), nil
}

// now is the clock of autosave times (tests replace it).
var now = time.Now

// Autosave writes the session's unsaved work to its autosave file in dir (AutosaveDir() when
// dir is ""), atomically, and returns the file's path. It writes nothing, and returns "",
// when the session is clean or has not changed since its last autosave. Each session has
// its own file, named after its Path (or "untitled") and the process; Save removes it.
func (s *Session) Autosave(dir string) (string, error) {
	if !s.Dirty() || (s.autosave != "" && s.autosaveGen == s.gen) {
		return "", nil
	}
	if dir == "" {
		var err error
		if dir, err = AutosaveDir(); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("autosave: %w", err)
	}
	path := s.autosave
	if path == "" || filepath.Dir(path) != filepath.Clean(dir) {
		path = filepath.Join(dir, autosaveName(s.Path))
	}
	origin := ""
	if s.Path != "" {
		if abs, err := filepath.Abs(s.Path); err == nil {
			origin = abs
		}
	}
	data, err := marshal(s, &autosaveInfo{Origin: origin, Saved: now()})
	if err != nil {
		return "", fmt.Errorf("autosave: %w", err)
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return "", fmt.Errorf("autosave: %s: %w", path, userfile.PathErr(err))
	}
	s.MarkAutosaved(path, s.gen)
	return path, nil
}

// MarkAutosaved records that a snapshot of generation gen was autosaved to path (by a Clone,
// in the background), so that the next Autosave of an unchanged session writes nothing and
// Save removes the file.
func (s *Session) MarkAutosaved(path string, gen uint64) {
	s.autosave, s.autosaveGen = path, gen
}

// autosaveName names a session's autosave file: the base name of its file (or "untitled"),
// a hash of its absolute path and the process ID, so that two sessions, or two ssmlab
// processes, never share one.
func autosaveName(path string) string {
	base, sum := "untitled", strconv.FormatInt(now().UnixNano(), 36)
	if path != "" {
		base = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		h := sha256.Sum256([]byte(abs))
		sum = hex.EncodeToString(h[:4])
	}
	return fmt.Sprintf("%s-%s-%d%s", base, sum, os.Getpid(), Extension)
}

// AutosaveInfo describes an autosave file found by ListAutosaves.
type AutosaveInfo struct {
	Path   string    // the autosave file
	Origin string    // the session file it belongs to; "" for an untitled session
	Saved  time.Time // when it was written
	// OriginNewer is set when Origin was modified after the autosave: recovering would
	// undo later saved work.
	OriginNewer bool
	// Summary is "3 filters, 1 target, 0 jobs".
	Summary string
	// Err says why the file cannot be recovered (it is not a readable session); the other
	// fields, but Path, are then empty.
	Err error
}

// ListAutosaves returns the autosave files in dir (AutosaveDir() when ""), newest first.
// A missing directory holds none.
func ListAutosaves(dir string) ([]AutosaveInfo, error) {
	if dir == "" {
		var err error
		if dir, err = AutosaveDir(); err != nil {
			return nil, err
		}
	}
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, userfile.PathErr(err))
	}
	var out []AutosaveInfo
	for _, e := range ents {
		if e.IsDir() || filepath.Ext(e.Name()) != Extension || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info := AutosaveInfo{Path: filepath.Join(dir, e.Name())}
		s, auto, err := readAutosave(info.Path)
		switch {
		case err != nil:
			info.Err = err
		default:
			info.Origin, info.Saved = auto.Origin, auto.Saved
			info.Summary = s.Summary()
			if info.Origin != "" {
				if fi, err := os.Stat(info.Origin); err == nil && fi.ModTime().After(auto.Saved) {
					info.OriginNewer = true
				}
			}
		}
		out = append(out, info)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Saved.After(out[j].Saved) })
	return out, nil
}

func readAutosave(path string) (*Session, *autosaveInfo, error) {
	data, err := userfile.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	s, auto, err := unmarshal(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if auto == nil {
		return nil, nil, fmt.Errorf("%s: %w", path, invalidf("not an autosave file (no \"autosave\" key)"))
	}
	return s, auto, nil
}

// RecoverAutosave reads an autosave file. The session it returns belongs to the autosave's
// origin (its Path; "" for an untitled session), is dirty, and keeps writing to the same
// autosave file until it is saved, which removes the file.
func RecoverAutosave(path string) (*Session, error) {
	s, auto, err := readAutosave(path)
	if err != nil {
		return nil, err
	}
	s.Path = auto.Origin
	dir := filepath.Dir(path)
	if auto.Origin != "" {
		dir = filepath.Dir(auto.Origin)
	}
	s.loadLinked(dir, false)
	s.gen = s.savedGen + 1
	s.autosave, s.autosaveGen = path, s.gen
	return s, nil
}

// DiscardAutosave removes an autosave file.
func DiscardAutosave(path string) error {
	if filepath.Ext(path) != Extension {
		return fmt.Errorf("%s: not an autosave file", path)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	return nil
}

// Summary returns "2 filters, 1 target, 0 jobs".
func (s *Session) Summary() string {
	return fmt.Sprintf("%s, %s, %s", plural(len(s.Filters), "filter"), plural(len(s.Targets), "target"), plural(len(s.Jobs), "job"))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
