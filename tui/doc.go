// Package tui is ssmlab's terminal workbench: a Bubble Tea (v1) program that shows the
// session's filters, their representations in every form with conversion reports, their
// responses and pole–zero plots, lets the user move poles and edit coefficients, and runs
// distillation jobs in the background. docs/guide.md is the user's guide.
//
// # Overview
//
// The work is a sessions.Session, the one model of it: the items and their order, where each
// came from (a distilled filter's target and job), the jobs, which items are unsaved, and
// the view worth restoring. app holds it with what the workbench computed from it (item,
// keyed by each item's generation) and the jobs running here; its methods are the actions on
// the work (app.go, actions.go, jobrun.go). The panes are components (soft-serve's
// Component, lazygit's controllers): listPane, reprPane, plotsPane and jobsPane each own
// their part of the view's state, the keys they handle (bindings, from which their help is
// made) and their view; the dialogs (help, palette, prompt, confirm, picker, layerPicker,
// jobForm, messagesDialog, recoverDialog) take the keyboard while open. Model, the root
// (glow's layout), routes messages to them, alone sees tea.WindowSizeMsg and gives the panes
// their sizes, splits a burst of keys read at once ("jjj") into the keys it holds, and after
// every message lets them follow the session (sync) and records the view in it. Every action
// is a palette command (commands.go); key bindings are shortcuts.
//
// Saving writes the session whole, to the file it came from (ctrl+s, :w) or another
// (:save-session PATH, :w PATH), refusing to overwrite one changed on disk without asking;
// every change is autosaved within a second to the user's state directory, and the autosaves
// of workbenches that ended without saving are offered back at start (save.go, autosave.go).
//
// # Invariants
//
//   - Update never blocks and does no heavy maths: conversions, responses, poles and zeros,
//     presets, file access (saves and autosaves of a snapshot, Session.Clone) and jobs run
//     in commands (cmds.go) that capture immutable inputs and return messages. Filters are
//     never modified in place; an edit builds a new filter and replaces the session's
//     (ReplaceFilter), which advances the item's generation (sessions.Session.Changed).
//   - A result carries the key it was computed for (item ID, generation, channel, lengths)
//     and is dropped when the item has moved on. One response and one pole/zero computation
//     per item are in flight at a time; the next starts when it returns.
//   - One write of the session or its autosave is in flight at a time; a quit waits for it.
//     A signal that ends a run (SIGTERM, SIGHUP, SIGINT from outside; Main) quits as a second
//     ctrl+c does, keeping the unsaved work in the autosave, up to date.
//   - Views render stored state. The plots pane caches its rendering by the pointers of the
//     data it shows.
//   - Job progress goes through a one-slot channel (the latest event wins) and is delivered
//     by a re-issued wait command, at most once per Options.ProgressInterval (100 ms);
//     quitting cancels every running job.
//   - No action replaces a filter by a conversion outside the documented accuracy
//     (filters.CheckAccuracy, the CLI's gate) without asking (app.gate); the list marks a
//     filter its form holds inaccurately "≈". An export whose tensors fail their read-back
//     check writes nothing unless forced, as ssmlab export.
//   - Nothing depends on colour alone: the focused pane has a thick border, the cursor a "▸",
//     the selected pole a "⊗", so NO_COLOR (and the Ascii profile of the tests) loses
//     nothing. Colours are adaptive (light and dark backgrounds).
//
// # Dependencies
//
// The workbench reaches the rest of ssmlab through small interfaces (deps.go): PresetSource,
// Store, JobRunner, Analyzer and FigureWriter. wire.go adapts presets (the registry), train
// (train.Run on the backend train.SelectBackend picks: the CPU, and the GPU where there is
// one; train.FitLadder for ladders, LadderRunner), analysis and analysis/figures (the responses and group delay that ssmlab plot draws
// too); store.go adapts sessions (session, filter and array files, and checkpoints' layers
// through sessions/layouts, as ssmlab import). Tests substitute fakes
// for the presets and the runner.
//
// # Live editing and the interactive budget
//
// Moving a pole works in the forms that hold their poles (zpk, diagonal, rotation): the edit
// is O(n) and the responses O(n·L). Forms that do not (dense, companion, tf) are converted to
// zpk on the first move. BenchmarkPoleMove measures keypress to redraw for n = 256,
// L = 8192 (docs/guide.md records the figure).
package tui
