// Package cli is ssmlab's headless command line: `ssmlab convert` and `ssmlab analyze`.
//
// # Overview
//
// Main runs one command line in process, with the standard streams passed in, and returns the
// exit status; it never calls os.Exit and keeps no state between calls, so tests drive it
// directly. The package depends on filters only; it draws nothing (the terminal UI lives in
// tui/, which will take over `ssmlab` with no arguments).
//
// # Conventions
//
//   - FILE is a filter or bank document (docs/formats.md); "-" reads it from stdin.
//   - Results go to stdout as JSON with snake_case keys (the one exception is "H", the
//     frequency response, named after the maths); complex numbers are [re, im] pairs.
//     Human messages (conversion summaries, warnings, errors) go to stderr.
//   - JSON cannot carry NaN or ±Inf. A result that would hold one is an error naming the value,
//     and nothing is printed. (Conversion reports are always finite: filters saturates an
//     infinite condition number or error at math.MaxFloat64 and adds a warning.)
//
// # Exit status
//
//	0  success
//	1  the work failed: unreadable or invalid input, a conversion that cannot be done,
//	   a result that is not finite, an output that cannot be written
//	2  the command line is wrong: unknown command or flag, bad flag value, missing FILE
//	128+N  cancelled by signal N before writing anything: 130 for SIGINT (Ctrl-C), 143
//	   for SIGTERM, 129 for SIGHUP; stderr's last line is "ssmlab: cancelled; nothing
//	   was written"
//
// A failure prints exactly one line on stderr, "ssmlab: FILE: problem" (or
// "ssmlab: COMMAND: problem; see 'ssmlab COMMAND --help'" for the command line), and leaves
// stdout empty.
package cli
