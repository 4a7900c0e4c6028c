package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/internal/strictjson"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/train/plan"
)

// The formats of the files a whole-model distillation leaves: a fitted unit in a work
// directory, and a shard's part (its units, for ssmlab merge).
const (
	UnitFormat = "ssmlab-distill-unit/2"
	PartFormat = "ssmlab-distill-part/2"
)

// unitRecord is a fitted unit as stored: the unit, its fit key (plan.FitKey), a record and a
// filter file document per channel, and the SHA-256 of all that (Sum). A unit is trusted as
// fitted, its records written into the manifest as they are, so a file edited or damaged in
// a way that still parses (a pole moved outside the unit circle under a record that says
// stable) must not read: Sum makes it a damaged file, fitted again or refused.
type unitRecord struct {
	Format   string               `json:"format"`
	Key      string               `json:"key"`
	Unit     plan.Unit            `json:"unit"`
	Channels []plan.ChannelRecord `json:"channels"`
	Filters  []json.RawMessage    `json:"filters"`
	Warnings []string             `json:"warnings,omitempty"`
	Shared   *plan.SharedRecord   `json:"shared,omitempty"`
	MIMO     *plan.MIMORecord     `json:"mimo,omitempty"`
	// AutoMaxRadius is plan.UnitResult's, omitted where 0: a unit stored before it was
	// recorded reads (and sums) as it did, with none.
	AutoMaxRadius float64 `json:"auto_max_radius,omitempty"`
	Sum           string  `json:"sha256"`
}

// checksum is the SHA-256 of the record as JSON without its Sum: encoding/json writes a
// struct's fields in order, compacts the filters' raw JSON and writes each float64 in its
// shortest form, which reads back to the same bits, so a record read encodes as written.
func (rec unitRecord) checksum() string {
	rec.Sum = ""
	b, err := json.Marshal(rec)
	if err != nil {
		return "" // a value beyond JSON: matches no stored sum
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func encodeUnit(key string, r *plan.UnitResult) (unitRecord, error) {
	rec := unitRecord{Format: UnitFormat, Key: key, Unit: r.Unit, Channels: r.Channels, Warnings: r.Warnings, Shared: r.Shared, MIMO: r.MIMO, AutoMaxRadius: r.AutoMaxRadius}
	for c, f := range r.Filters {
		b, err := filterfile.Marshal(filters.Document{Filter: f})
		if err != nil {
			return rec, fmt.Errorf("%s, channel %d: %w", r.Unit.ID(), r.Unit.Lo+c, err)
		}
		rec.Filters = append(rec.Filters, b)
	}
	rec.Sum = rec.checksum()
	return rec, nil
}

// decode checks a record against the unit and key expected and reads its filters.
func (rec unitRecord) decode(key string, want plan.Unit) (*plan.UnitResult, error) {
	switch {
	case rec.Format != UnitFormat:
		return nil, fmt.Errorf("format %q, want %q", rec.Format, UnitFormat)
	case rec.Sum != rec.checksum():
		return nil, fmt.Errorf("its content does not match its SHA-256 (edited or damaged)")
	case rec.Key != key:
		return nil, fmt.Errorf("fitted with other options or from another input (key %.12s…, want %.12s…)", rec.Key, key)
	case rec.Unit != want:
		return nil, fmt.Errorf("holds unit %s (length %d, order %d), want %s (length %d, order %d)", rec.Unit.ID(), rec.Unit.Length, rec.Unit.Order, want.ID(), want.Length, want.Order)
	case want.MIMO != (rec.MIMO != nil):
		return nil, fmt.Errorf("holds a MIMO unit without its reduced layer, or a reduced layer for a unit of channels")
	case rec.MIMO != nil && (len(rec.Filters) != 0 || len(rec.Channels) != want.Channels() || rec.MIMO.Outputs != want.Channels()):
		return nil, fmt.Errorf("holds a reduced layer of %s with %s and %s for %s", plural.Count(rec.MIMO.Outputs, "output"), plural.Count(len(rec.Filters), "filter"), plural.Count(len(rec.Channels), "record"), plural.Count(want.Channels(), "channel"))
	case rec.MIMO == nil && (len(rec.Filters) != want.Channels() || len(rec.Channels) != want.Channels()):
		return nil, fmt.Errorf("holds %s and %s for %s", plural.Count(len(rec.Filters), "filter"), plural.Count(len(rec.Channels), "record"), plural.Count(want.Channels(), "channel"))
	case want.Shared != (rec.Shared != nil):
		return nil, fmt.Errorf("holds a unit of shared modes without them, or modes for a unit of its own")
	case rec.Shared != nil && (len(rec.Shared.Group) != want.Channels() || len(rec.Shared.Dt) != want.Channels() || len(rec.Shared.Residues) != want.Channels()):
		return nil, fmt.Errorf("holds shared modes of %s for %d", plural.Count(len(rec.Shared.Group), "channel"), want.Channels())
	}
	r := &plan.UnitResult{Unit: rec.Unit, Channels: rec.Channels, Warnings: rec.Warnings, Shared: rec.Shared, MIMO: rec.MIMO, AutoMaxRadius: rec.AutoMaxRadius}
	if rec.MIMO != nil {
		if _, err := rec.MIMO.System(); err != nil {
			return nil, fmt.Errorf("its reduced layer: %w", err)
		}
		for c, ch := range rec.Channels {
			if ch.Channel != c {
				return nil, fmt.Errorf("record %d is of channel %d, want %d", c, ch.Channel, c)
			}
		}
	}
	for c, b := range rec.Filters {
		doc, err := filterfile.Unmarshal(b)
		if err != nil {
			return nil, fmt.Errorf("channel %d: %w", want.Lo+c, err)
		}
		if doc.Filter == nil {
			return nil, fmt.Errorf("channel %d holds a bank, not a filter", want.Lo+c)
		}
		if rec.Channels[c].Channel != want.Lo+c {
			return nil, fmt.Errorf("record %d is of channel %d, want %d", c, rec.Channels[c].Channel, want.Lo+c)
		}
		r.Filters = append(r.Filters, doc.Filter)
	}
	return r, nil
}

// WorkDir keeps the fitted units of a distillation, one file each, so that a run stopped at
// any moment goes on where it stopped (it is a plan.Store). Its files are written atomically;
// each unit has one writer (its shard), and a unit's file name depends on the fit key, so
// runs with other inputs or options share a directory without mixing.
type WorkDir struct {
	Dir string
	Key string
	// Ignored lists the files Load found and could not use (another format, a damaged
	// file), which are fitted again.
	Ignored []string
}

// OpenWorkDir makes the work directory dir (and its parents) if missing.
func OpenWorkDir(dir, key string) (*WorkDir, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("work directory %s: %w", dir, userfile.PathErr(err))
	}
	return &WorkDir{Dir: dir, Key: key}, nil
}

// Path returns the file of a unit.
func (w *WorkDir) Path(u plan.Unit) string {
	b, _ := json.Marshal(u)
	h := sha256.Sum256(append([]byte(w.Key+"\n"), b...))
	return filepath.Join(w.Dir, "unit-"+hex.EncodeToString(h[:12])+".json")
}

// Load returns the unit fitted before, or nil.
func (w *WorkDir) Load(u plan.Unit) (*plan.UnitResult, error) {
	path := w.Path(u)
	data, err := userfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec unitRecord
	if err := strictjson.Unmarshal(data, &rec); err != nil {
		w.Ignored = append(w.Ignored, fmt.Sprintf("%s: %v", path, err))
		return nil, nil
	}
	r, err := rec.decode(w.Key, u)
	if err != nil {
		w.Ignored = append(w.Ignored, fmt.Sprintf("%s: %v", path, err))
		return nil, nil
	}
	return r, nil
}

// Others counts the unit files in the directory fitted under another key: from another
// input or with another recipe, which a run under this key does not take (it fits its
// units anew), so that a run resumed with a changed option can say so. It reads each file's
// head alone, up to its key.
func (w *WorkDir) Others() (int, error) {
	names, err := filepath.Glob(filepath.Join(w.Dir, "unit-*.json"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if key, ok := unitKey(name); ok && key != w.Key {
			n++
		}
	}
	return n, nil
}

// Has reports whether the directory holds a file for the unit (fitted under this key;
// Load tells whether it can be used).
func (w *WorkDir) Has(u plan.Unit) bool {
	_, err := os.Stat(w.Path(u))
	return err == nil
}

// unitKey reads the fit key of a unit file (its "key", after "format"); ok is false for a
// file that does not read as one.
func unitKey(path string) (key string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		name, err := dec.Token()
		if err != nil {
			return "", false
		}
		switch name {
		case "key":
			t, err := dec.Token()
			key, ok = t.(string)
			return key, ok && err == nil
		case "format":
			if _, err := dec.Token(); err != nil {
				return "", false
			}
		default:
			return "", false
		}
	}
	return "", false
}

// Save keeps a fitted unit.
func (w *WorkDir) Save(r *plan.UnitResult) error {
	rec, err := encodeUnit(w.Key, r)
	if err != nil {
		return err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("%s: %w", r.Unit.ID(), err)
	}
	path := w.Path(r.Unit)
	if err := atomicfile.WriteFile(path, append(data, '\n')); err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	return nil
}

// Part is a shard's share of a distillation: the input it read (and where), the options, the
// plan it shared (plan.Hash) and its units, fitted. ssmlab merge assembles parts.
type Part struct {
	Input     plan.Input
	InputPath string
	Options   plan.Options
	Plan      string
	Shard     plan.Shard
	Units     []*plan.UnitResult
}

type partFile struct {
	Format    string       `json:"format"`
	Input     plan.Input   `json:"input"`
	InputPath string       `json:"input_path"`
	Options   plan.Options `json:"options"`
	Plan      string       `json:"plan"`
	Shard     plan.Shard   `json:"shard"`
	Units     []unitRecord `json:"units"`
}

// EncodePart returns a part file.
func EncodePart(p *Part) ([]byte, error) {
	key := plan.FitKey(p.Input, p.Options)
	pf := partFile{Format: PartFormat, Input: p.Input, InputPath: p.InputPath, Options: p.Options, Plan: p.Plan, Shard: p.Shard}
	for _, r := range p.Units {
		rec, err := encodeUnit(key, r)
		if err != nil {
			return nil, err
		}
		pf.Units = append(pf.Units, rec)
	}
	data, err := json.Marshal(pf)
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// ReadPart reads a part file. Its errors start with the path.
func ReadPart(path string) (*Part, error) {
	data, err := userfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := DecodePart(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// DecodePart reads a part file's content.
func DecodePart(data []byte) (*Part, error) {
	var pf partFile
	if err := strictjson.Unmarshal(data, &pf); err != nil {
		if kind, ok := ArrayFileKind(data, ""); ok {
			return nil, inputf("this is an array file (%s), not a part file (%q: a part written by ssmlab distill with a shard)", kind, PartFormat)
		}
		return nil, inputf("not a part file: %v", err)
	}
	if pf.Format == "" {
		// it said `format "", want …` of a filter file
		return nil, inputf("not a part file: no \"format\" (want %q: a part written by ssmlab distill with a shard)", PartFormat)
	}
	if pf.Format != PartFormat {
		return nil, inputf("format %q, want %q (a part written by ssmlab distill with a shard)", pf.Format, PartFormat)
	}
	if err := pf.Shard.Check(); err != nil {
		return nil, inputf("%v", err)
	}
	p := &Part{Input: pf.Input, InputPath: pf.InputPath, Options: pf.Options, Plan: pf.Plan, Shard: pf.Shard}
	key := plan.FitKey(p.Input, p.Options)
	for _, rec := range pf.Units {
		if rec.Unit.Lo < 0 || rec.Unit.Hi <= rec.Unit.Lo {
			return nil, inputf("unit %s holds no channels", rec.Unit.ID())
		}
		r, err := rec.decode(key, rec.Unit)
		if err != nil {
			return nil, inputf("unit %s: %v", rec.Unit.ID(), err)
		}
		p.Units = append(p.Units, r)
	}
	return p, nil
}

// MergeParts checks that parts (read from the files named) come from one input with the
// same options and plan, the plan of units, and that together they hold every unit exactly
// once; it returns the units' results in the plan's order. A gap or an overlap is a
// *plan.CoverageError naming the units.
func MergeParts(parts []*Part, names []string, units []plan.Unit) ([]*plan.UnitResult, error) {
	if len(parts) == 0 {
		return nil, inputf("no parts to merge")
	}
	first := parts[0]
	for i, p := range parts[1:] {
		switch {
		case p.Input != first.Input:
			return nil, inputf("%s and %s distil different inputs (%s, %d bytes, sha256 %.12s… and %s, %d bytes, sha256 %.12s…)",
				names[0], names[i+1], first.Input.Name, first.Input.Size, first.Input.SHA256, p.Input.Name, p.Input.Size, p.Input.SHA256)
		case !reflect.DeepEqual(p.Options, first.Options):
			return nil, inputf("%s and %s were made with different options: %s", names[0], names[i+1], optionsDiff(first.Options, p.Options))
		case p.Shard.Count != first.Shard.Count:
			return nil, inputf("%s is shard %s and %s shard %s: the job was divided differently", names[0], first.Shard, names[i+1], p.Shard)
		}
	}
	want := plan.Hash(units)
	for i, p := range parts {
		if p.Plan != want {
			return nil, inputf("%s was made for another plan of the work than this input and options give (another ssmlab version?)", names[i])
		}
	}
	ids := make([][]string, len(parts))
	byID := map[string]*plan.UnitResult{}
	for i, p := range parts {
		for _, r := range p.Units {
			ids[i] = append(ids[i], r.Unit.ID())
			byID[r.Unit.ID()] = r
		}
	}
	if err := plan.Coverage(units, ids); err != nil {
		return nil, inputError{fmt.Errorf("the parts do not cover the work once: %w%s", err, shardsAmiss(parts, names, units))}
	}
	out := make([]*plan.UnitResult, len(units))
	for i, u := range units {
		out[i] = byID[u.ID()]
	}
	return out, nil
}

// shardsAmiss says which shards a set of parts that does not cover the work lacks (those
// owning a unit no part holds) and which it holds twice, naming their files: the task of
// an array to run again is the shard's index, which the units missing do not tell.
func shardsAmiss(parts []*Part, names []string, units []plan.Unit) string {
	n := parts[0].Shard.Count
	given := make([][]string, n)
	for i, p := range parts {
		given[p.Shard.Index] = append(given[p.Shard.Index], names[i])
	}
	var msg []string
	var absent []string
	for s, idx := range plan.Assign(units, n) {
		if len(given[s]) == 0 && len(idx) > 0 {
			absent = append(absent, plan.Shard{Index: s, Count: n}.String())
		}
	}
	if len(absent) > 0 {
		which := "shard " + absent[0]
		if len(absent) > 1 {
			which = "shards " + plural.First(absent, 8, " ")
		}
		msg = append(msg, fmt.Sprintf("no part of %s was given (a task that failed: run it again, it goes on from the work directory)", which))
	}
	for s, files := range given {
		if len(files) > 1 {
			msg = append(msg, fmt.Sprintf("%s hold the same shard, %s", plural.First(files, 8, " "), plan.Shard{Index: s, Count: n}))
		}
	}
	if len(msg) == 0 {
		return ""
	}
	return "; " + strings.Join(msg, "; ")
}

// optionsDiff names the options two parts disagree on, down to the nested key
// ("spec.refine 50 and 20"): naming the whole recipe buried the one setting that differs.
func optionsDiff(a, b plan.Options) string {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var ma, mb map[string]any
	json.Unmarshal(ja, &ma)
	json.Unmarshal(jb, &mb)
	diff := jsonDiff("", ma, mb)
	if len(diff) == 0 {
		return "?"
	}
	sort.Strings(diff)
	return strings.Join(diff, "; ")
}

// jsonDiff lists the keys of two decoded JSON objects whose values differ, as dotted paths
// under prefix.
func jsonDiff(prefix string, a, b map[string]any) []string {
	var diff []string
	for k, v := range a {
		w, ok := b[k]
		va, _ := v.(map[string]any)
		wa, _ := w.(map[string]any)
		switch {
		case !ok:
			diff = append(diff, fmt.Sprintf("%s%s %v and unset", prefix, k, jsonText(v)))
		case va != nil && wa != nil:
			diff = append(diff, jsonDiff(prefix+k+".", va, wa)...)
		case !reflect.DeepEqual(v, w):
			diff = append(diff, fmt.Sprintf("%s%s %v and %v", prefix, k, jsonText(v), jsonText(w)))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			diff = append(diff, fmt.Sprintf("%s%s unset and %v", prefix, k, jsonText(v)))
		}
	}
	return diff
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
