package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/plural"
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

// autosaveState is a session's autosave file, shared by its clones.
type autosaveState struct {
	mu      sync.Mutex
	path    string             // the file, once claimed
	gen, ui uint64             // the generations it holds
	lock    *atomicfile.Locked // held while the file is this session's
	closed  bool               // RemoveAutosave was called: no more autosaves
}

// claim makes path the session's autosave file: it takes the file's lock (a running ssmlab
// holds its autosave's for as long as it runs, so that no other offers to recover it) and
// creates it, empty and private, if it does not exist. A file claimed before is removed.
func (a *autosaveState) claim(path string) error {
	l, err := atomicfile.TryLock(path)
	if errors.Is(err, atomicfile.ErrLocked) {
		return fmt.Errorf("%s is in use by another ssmlab that is running", path)
	}
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = tighten(path)
	}
	if err != nil {
		l.Unlock()
		return userfile.PathErr(err)
	}
	a.release(true)
	a.path, a.lock = path, l
	return nil
}

// tighten makes a file private (0600) if it is open to others.
func tighten(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(path, fi.Mode().Perm()&0o700)
	}
	return nil
}

// release forgets the autosave file, removing it when remove is set, and drops its lock.
func (a *autosaveState) release(remove bool) {
	if a.path != "" && remove {
		_ = os.Remove(a.path) // best effort: a leftover is offered for recovery, no harm
	}
	_ = a.lock.Unlock()
	a.path, a.lock, a.gen, a.ui = "", nil, 0, 0
}

// Autosave writes the session's unsaved work to its autosave file in dir (AutosaveDir() when
// dir is ""), atomically, and returns the file's path. It writes nothing, and returns "",
// when the session is clean or neither it nor its UI state changed since its last autosave.
// Each session has its own file, named after its Path (or "untitled") and the process,
// private (0600) in a private directory (0700, tightened if it is not); Save and
// RemoveAutosave remove it. The session holds the file's lock until then, so that
// ListAutosaves in another process does not offer it while this one runs. Autosave may be
// called on a Clone, in the background: the clone shares the file with its session.
func (s *Session) Autosave(dir string) (string, error) {
	a := s.auto
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || !s.Dirty() || (a.path != "" && a.gen == s.gen && a.ui == s.uiGen) {
		return "", nil
	}
	if dir == "" {
		var err error
		if dir, err = AutosaveDir(); err != nil {
			return "", err
		}
	}
	if err := atomicfile.MkdirPrivate(dir); err != nil {
		return "", fmt.Errorf("autosave: %w", err)
	}
	if a.path == "" || filepath.Dir(a.path) != filepath.Clean(dir) {
		if err := a.claim(filepath.Join(dir, autosaveName(s.Path))); err != nil {
			return "", fmt.Errorf("autosave: %w", err)
		}
	}
	info := &autosaveInfo{Saved: now(), Dirty: s.dirtyItems(), Deleted: s.Deleted()}
	if s.Path != "" {
		if abs, err := filepath.Abs(s.Path); err == nil {
			info.Origin = abs
			if sum, ok := s.disk.sumOf(abs); ok {
				info.Base = &sum
			}
		}
	}
	data, err := marshal(s, info)
	if err != nil {
		return "", fmt.Errorf("autosave: %w", err)
	}
	if err := atomicfile.WriteFile(a.path, data); err != nil {
		return "", fmt.Errorf("autosave: %s: %w", a.path, userfile.PathErr(err))
	}
	a.gen, a.ui = s.gen, s.uiGen
	return a.path, nil
}

// RemoveAutosave removes the session's autosave file, if it has one, and releases it, and
// autosaves the session (and its clones) no more: for the end of a session whose changes
// were saved, or discarded by the user. An Autosave of a clone in flight finishes first.
func (s *Session) RemoveAutosave() {
	s.auto.mu.Lock()
	defer s.auto.mu.Unlock()
	s.auto.release(true)
	s.auto.closed = true
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

// dirtyItems lists the filters and targets changed since the session was loaded or saved.
func (s *Session) dirtyItems() []string {
	var out []string
	for _, id := range s.Order() {
		if s.ItemDirty(id) {
			out = append(out, id)
		}
	}
	return out
}

// AutosaveInfo describes an autosave file found by ListAutosaves.
type AutosaveInfo struct {
	Path   string    // the autosave file
	Origin string    // the session file it belongs to; "" for an untitled session
	Saved  time.Time // when it was written
	// OriginChanged is the *ChangedError that saving the recovered work over Origin would
	// meet (Origin no longer holds the version the work follows: another program saved over
	// it, or removed it); nil when Origin is as the work left it.
	OriginChanged *ChangedError
	// Summary is "3 filters, 1 target, 0 jobs".
	Summary string
	// Changed names the filters and targets with unsaved changes, and Deleted those deleted
	// since the session was saved: the work the autosave holds that its origin does not.
	Changed, Deleted []string
	// Err says why the file cannot be recovered (it is not a readable session); the other
	// fields, but Path, are then empty.
	Err error
}

// ListAutosaves returns the autosave files in dir (AutosaveDir() when "") that no running
// ssmlab holds, newest first: the unsaved work of sessions whose program ended without
// saving or discarding it. A missing directory holds none; an empty file (a program killed
// as it claimed it) is removed.
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
		if !unused(info.Path) {
			continue
		}
		s, auto, err := readAutosave(info.Path)
		switch {
		case err != nil:
			info.Err = err
		default:
			info.Origin, info.Saved = auto.Origin, auto.Saved
			info.Summary = s.Summary()
			info.Deleted = auto.Deleted
			for _, id := range auto.Dirty {
				if e, ok := s.Filter(id); ok {
					info.Changed = append(info.Changed, e.Name)
				} else if t, ok := s.Target(id); ok {
					info.Changed = append(info.Changed, t.Name)
				}
			}
			if info.Origin != "" {
				var base diskVersion
				base.follow(info.Origin, auto.Base)
				_ = errors.As(base.check(info.Origin), &info.OriginChanged)
			}
		}
		out = append(out, info)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Saved.After(out[j].Saved) })
	return out, nil
}

// unused reports whether no running ssmlab holds the autosave file at path, removing it if
// it is empty.
func unused(path string) bool {
	l, err := atomicfile.TryLock(path)
	if err != nil {
		return false
	}
	defer l.Unlock()
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
		os.Remove(path)
		return false
	}
	return true
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
// origin (its Path; "" for an untitled session), is dirty (and so are the items that were;
// Deleted names the items removed before the autosave), and keeps writing to the same
// autosave file, whose lock it takes, until it is saved or RemoveAutosave is called. A file
// another running ssmlab holds is refused. Its file is known as the version the autosaved
// work followed (the one that session was loaded from or last saved as), not as the file is
// now: a save over a file that another program saved since, even before the last autosave,
// reports a *ChangedError, as the session that wrote the autosave would have.
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
	for _, id := range auto.Dirty {
		switch k, i := s.Lookup(id); k {
		case KindFilter:
			s.Filters[i].changed = s.gen
		case KindTarget:
			s.Targets[i].changed = s.gen
		}
	}
	for _, name := range auto.Deleted {
		s.deleted = append(s.deleted, deletion{name: name, gen: s.gen})
	}
	if s.Path != "" {
		s.disk.follow(s.Path, auto.Base)
	}
	if err := s.auto.claim(path); err != nil {
		return nil, err
	}
	s.auto.gen, s.auto.ui = s.gen, s.uiGen
	return s, nil
}

// DiscardAutosave removes an autosave file that no running ssmlab holds.
func DiscardAutosave(path string) error {
	if filepath.Ext(path) != Extension {
		return fmt.Errorf("%s: not an autosave file", path)
	}
	l, err := atomicfile.TryLock(path)
	if errors.Is(err, atomicfile.ErrLocked) {
		return fmt.Errorf("%s is in use by another ssmlab that is running", path)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	defer l.Unlock()
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	return nil
}

// Summary returns "2 filters, 1 target, 0 jobs".
func (s *Session) Summary() string {
	return fmt.Sprintf("%s, %s, %s", plural.Count(len(s.Filters), "filter"), plural.Count(len(s.Targets), "target"), plural.Count(len(s.Jobs), "job"))
}
