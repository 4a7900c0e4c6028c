// Package tui is ssmlab's terminal workbench: a Bubble Tea (v1) program that shows the
// session's filters, their representations in every form with conversion reports, their
// responses and pole–zero plots, lets the user move poles and edit coefficients, and runs
// distillation jobs in the background. docs/guide.md is the user's guide.
//
// # Overview
//
// Model is the root model (glow's layout): it owns the session (entries of the filters
// list) and concrete child models, one per pane — listModel, reprModel, plotsModel,
// jobsModel — each with its own view and setSize, sharing a common struct of styles and key
// bindings (soft-serve's Common). Only the root sees tea.WindowSizeMsg; relayout gives the
// children their sizes. Dialogs (help, the command palette, prompts, confirmations, the
// preset picker, the distillation form) take the keyboard while open; every action is a
// palette command (commands), and key bindings are shortcuts for them.
//
// # Invariants
//
//   - Update never blocks and does no heavy maths: conversions, responses, poles and zeros,
//     presets, file access and jobs run in commands (cmds.go) that capture immutable inputs
//     and return messages. Filters are never modified in place; an edit builds a new filter
//     and bumps the entry's generation (entry.rev).
//   - A result carries the key it was computed for (entry id, generation, channel, lengths)
//     and is dropped when the entry has moved on. One response and one pole/zero
//     computation per entry are in flight at a time; the next starts when it returns.
//   - Views render stored state. The plots pane caches its rendering by the pointers of the
//     data it shows.
//   - Job progress goes through a one-slot channel (the latest event wins) and is delivered
//     by a re-issued wait command, at most once per Options.ProgressInterval (100 ms);
//     quitting cancels every running job.
//   - Nothing depends on colour alone: the focused pane has a thick border, the cursor a "▸",
//     the selected pole a "⊗", so NO_COLOR (and the Ascii profile of the tests) loses
//     nothing. Colours are adaptive (light and dark backgrounds).
//
// # Dependencies
//
// The workbench reaches the rest of ssmlab through small interfaces (deps.go): PresetSource,
// Store, JobRunner, Analyzer and FigureWriter. wire.go adapts presets (the registry), train
// (train.Run on the backend train.SelectBackend picks: the CPU, and the GPU where there is
// one), analysis and analysis/figures (the responses and group delay that ssmlab plot draws
// too); store.go adapts sessions (session, filter and array files). Tests substitute fakes
// for the presets and the runner.
//
// # Live editing and the interactive budget
//
// Moving a pole works in the forms that hold their poles (zpk, diagonal, rotation): the edit
// is O(n) and the responses O(n·L). Forms that do not (dense, companion, tf) are converted to
// zpk on the first move. BenchmarkPoleMove measures keypress to redraw for n = 256,
// L = 8192 (docs/guide.md records the figure).
package tui
