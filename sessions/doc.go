// Package sessions saves and loads ssmlab's work, and moves filters and kernels between
// ssmlab and the files of training code: NumPy .npy/.npz, safetensors, CSV and JSON.
//
// # Overview
//
// A Session holds filter entries (single filters and banks, in any form of package filters),
// distillation targets (kernels: a (channels, length) array), job records (their
// specification and report as JSON, defined by the package that runs them, their status,
// log, and the target they fit and filter they made) and the UI state worth restoring: all
// of the workbench's work. Items have IDs ("f1", "t2", "j3") that stay the same across saves
// and loads and are never reused, an Origin (where they came from; a distilled filter's
// target and job) and a place in the Order they are listed in. Add*, Rename, Duplicate,
// Remove, ReplaceFilter and ReplaceJob change the session and advance its Generation; Dirty
// says whether it changed since it was loaded or saved, ItemDirty which items did, Deleted
// which were removed since.
//
//   - Files: Load reads a session file, Save writes one atomically and keeps the previous
//     version as FILE.bak. Marshal and Unmarshal work in memory.
//   - Autosave: Session.Autosave writes unsaved work, and the UI's state with it, to the
//     user's state directory ($XDG_STATE_HOME/ssmlab/autosave, or
//     ~/.local/state/ssmlab/autosave; private), and holds the file while the program runs;
//     ListAutosaves, RecoverAutosave and DiscardAutosave offer the files of programs that
//     ended without saving back at the next start.
//   - Import reads a filter, a bank or kernels from any supported file; Export writes items
//     as JSON, .npz, .safetensors, CSV or .npy; model layers (the RTF layout among them,
//     whose numerics are package rtf's) are read and written by the sub-package layouts.
//
// The array file formats themselves are in the sub-package arrays. The session file format,
// its versions and the RTF layout are described in docs/formats.md ("Session files" and
// "NumPy, safetensors and CSV").
//
// # Invariants
//
//   - Round trips are exact: Unmarshal(Marshal(s)) holds bit-identical filters and
//     kernels, and so do Export then Import in every format but CSV of a filter (its
//     impulse response) and float32 files.
//   - A crash or a kill at any moment of Save leaves either the old or the new file
//     (temporary file in the same directory, fsync, rename, fsync of the directory); the
//     backup is replaced the same way. Temporary files are private until complete, and a
//     later save removes those a kill left (package internal/atomicfile).
//   - Writers of one session file are serialised: Save and Update hold its lock while they
//     read, change and write it. Save refuses, with a *ChangedError, to overwrite the
//     session's own file when it changed on disk since it was loaded or saved.
//   - Readers check every size a file declares before allocating, and refuse NaN and
//     infinities.
//   - Session files of a newer version are refused with a *VersionError
//     ("session version 3 is newer than this ssmlab supports (2)"); older ones are migrated
//     as they are read (FileVersion keeps the version read) and saved at CurrentVersion.
//
// # Concurrency
//
// A Session is not safe for concurrent use. Filters, banks, kernel arrays and job JSON are
// treated as values (replaced, never changed in place), so Clone is cheap: a UI copies the
// session on its event loop, saves or autosaves the copy in the background, and reports a
// save back with MarkSaved (a clone shares its session's autosave file and disk version).
//
// # Errors
//
// Bad session files and bad arguments give errors wrapping ErrInvalid (with, for a filter,
// the filters.ErrInvalid message that names the key); array files give the errors of
// package arrays; a missing ID wraps ErrNotFound; several candidates give a *ChoiceError.
// A name the input does not hold, asked for by an option (an ImportOptions.Tensor that is no
// array and no layer's prefix, a key Session.Find finds no item of), is an *OptionError of
// that option listing what it holds, still wrapping arrays.ErrNotFound or ErrNotFound.
// An import or export option Import or Export cannot take is an *OptionError naming it and
// its value ("length 0 is outside [1, 1048576]"), found before any file is read
// (ImportOptions.Check, ExportOptions.Check); ExportOptionFormats says which formats use
// which option, and ExportOptions.CheckGiven refuses one given for another format. These are
// the only rules of the options: the command line and the workbench ask them before reading
// their input, and spell the option as their user writes it ("--length 0 …", "length=0 …").
// A layout option's value that the layer read cannot take (a length beyond a Hyena layer's
// positions) is found once the file is read: its error wraps layouts.ErrOptionValue and
// names the layer and the option.
package sessions
