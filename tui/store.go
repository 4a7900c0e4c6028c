package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// fileStore is the Store over package sessions: it opens session files, filter and bank
// files and every format sessions.Import reads (.npy, .npz, .safetensors, PyTorch files,
// CSV, target files; a checkpoint's layers through sessions/layouts), saves a filter or bank as a filter file and the session as a session file.
type fileStore struct{}

func (fileStore) Open(path string) (Opened, error) {
	if sessions.IsSession(path) {
		s, err := sessions.Load(path)
		return Opened{Session: s}, err
	}
	it, err := sessions.Import(path, sessions.ImportOptions{})
	var layers *layouts.ChoiceError
	var arrs *sessions.ChoiceError
	switch {
	case errors.As(err, &layers):
		return Opened{Layers: layerChoices(layers.Layers)}, nil
	case errors.As(err, &arrs):
		var out []LayerChoice
		for _, name := range arrs.Names {
			out = append(out, LayerChoice{Prefix: name, Layout: sessions.Kernels, Label: name + " (as kernels)"})
		}
		return Opened{Layers: out}, nil
	case errors.As(err, new(*sessions.NotImportableError)):
		return Opened{}, fmt.Errorf("%s: not a filter, session or array file ssmlab reads: want %s", path, workbenchReads)
	case err != nil:
		return Opened{}, err
	}
	if head, err := userfile.Head(path, 512); err != nil || !isArrayFile(head, path) {
		it.Note = "" // a filter or target file: it is its own origin
	}
	return opened(path, it), nil
}

// workbenchReads names the files o opens, for its error about a file of none of them.
const workbenchReads = "a session (.ssmlab), a filter or target file (JSON), kernels (.npy, .npz, .safetensors, .pt, CSV) or a model checkpoint's layer (.safetensors, .npz, .pt, .bin, .ckpt)"

func isArrayFile(head []byte, path string) bool {
	_, ok := arrays.Sniff(head, path)
	return ok
}

func (fileStore) OpenLayer(path string, c LayerChoice) (Opened, error) {
	it, err := sessions.Import(path, sessions.ImportOptions{Tensor: c.Prefix, Layout: c.Layout})
	if err != nil {
		return Opened{}, err
	}
	return opened(path, it), nil
}

// layerChoices describes layers as ssmlab import --list does: prefix, layout, size, dtype.
func layerChoices(ls []layouts.Layer) []LayerChoice {
	out := make([]LayerChoice, len(ls))
	for i, l := range ls {
		prefix := l.Prefix
		if prefix == "" {
			prefix = "(top level)"
		}
		chans := plural.Count(l.Channels, "channel")
		if l.Problem != "" {
			chans = "unreadable: " + l.Problem // import's error, not "0 channels"
		}
		out[i] = LayerChoice{Prefix: l.Prefix, Layout: string(l.Layout),
			Label: fmt.Sprintf("%-24s %-12s %s, %s, %s", prefix, l.Layout, chans, l.Size(), l.DType)}
	}
	return out
}

// opened is an imported item as the workbench adds it: a model's layer (or an array)
// keeps the note of how it was read.
func opened(path string, it sessions.Item) Opened {
	if t := it.Target; t != nil {
		name := t.Name
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
		return Opened{Items: []Item{{Name: name, Kernels: t.Kernels, Source: t.Source, Note: it.Note, Warnings: it.Warnings}}}
	}
	return Opened{Items: []Item{{Name: it.Entry.Name, Filter: it.Entry.Filter, Bank: it.Entry.Bank, Note: it.Note, Warnings: it.Warnings}}}
}

func (fileStore) Save(path string, it Item, over bool) error {
	if it.Kernels != nil {
		return fmt.Errorf("kernels are saved with the session (ctrl+s), not as a filter file")
	}
	data, err := filterfile.Marshal(filters.Document{Name: it.Name, Filter: it.Filter, Bank: it.Bank})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := refuseExisting(path, over); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	return nil
}

func (fileStore) Export(path string, it Item, o sessions.ExportOptions, force, over bool) (sessions.Exported, error) {
	var item sessions.Item
	if it.Kernels != nil {
		item.Target = &sessions.Target{Name: it.Name, Kernels: it.Kernels}
	} else {
		item.Entry = &sessions.Entry{Name: it.Name, Filter: it.Filter, Bank: it.Bank}
	}
	out, err := sessions.Export([]sessions.Item{item}, o)
	if err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	if out.Failed() && !force {
		return out, &ReadBackError{Path: path, Check: failedCheck(out)}
	}
	if err := refuseExisting(path, over); err != nil {
		return out, err
	}
	if err := atomicfile.WriteFile(path, out.Data); err != nil {
		return out, fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	return out, nil
}

// ReadBackError is an export refused: its tensors do not hold the filter to the documented
// accuracy (ssmlab export's exit 1), and nothing was written.
type ReadBackError struct {
	Path  string
	Check sessions.ReadBackCheck
}

func (e *ReadBackError) Error() string {
	text, _ := e.Check.Summary("dtype=float64")
	return fmt.Sprintf("%s: not written: it %s; add force to write it anyway", e.Path, text)
}

// failedCheck is the first read-back check that failed.
func failedCheck(out sessions.Exported) sessions.ReadBackCheck {
	for _, c := range out.ReadBack {
		if c.Failed() {
			return c
		}
	}
	return sessions.ReadBackCheck{}
}

// ExistsError is a write refused because its file exists and is not the session's or the
// filter's own (the workbench asks before overwriting it).
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string { return e.Path + " exists" }

// refuseExisting is the *ExistsError of a write to path that exists, unless over. A
// directory is refused whatever over says, as opening one is: asking "overwrite it?" first
// would only fail after y. So is a path the write would refuse (atomicfile.Check: a
// read-only file, a link into another directory, a directory that takes no new file).
func refuseExisting(path string, over bool) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: %w", path, userfile.NotRegular(fi.Mode()))
	}
	if err := atomicfile.Check(path); err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	if over {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return &ExistsError{Path: path}
	}
	return nil
}

// freePath is path, or the first of path-2, path-3, … (before its extension, a trailing -N
// replaced) that names no file, as items are numbered (sessions.FreeName): a suggestion that
// enter never asks to overwrite. Where it cannot tell (a directory it may not read), or after
// 999 taken, it is path: the save then says what is wrong, or asks.
func freePath(path string) string {
	ext := filepath.Ext(path)
	free, ok := sessions.FreeName(strings.TrimSuffix(path, ext), 999, func(stem string) (bool, error) {
		_, err := os.Lstat(stem + ext)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return true, err
	})
	if !ok {
		return path
	}
	return free + ext
}

func (fileStore) SaveSession(s *sessions.Session, path string, over bool) error {
	if over {
		return s.SaveOver(path)
	}
	if err := refuseExisting(path, samePath(path, s.Path)); err != nil {
		return err
	}
	return s.Save(path)
}

// samePath reports whether a and b name one file as far as their names tell.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == ab
}
