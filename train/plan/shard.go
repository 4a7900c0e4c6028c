package plan

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/internal/plural"
)

// Shard is share Index of Count (0 ≤ Index < Count) of a job's units.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// MaxShards is the largest number of shards of a job.
const MaxShards = 1 << 16

// All is the whole job: the only share of one.
var All = Shard{Index: 0, Count: 1}

func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// Check reports whether the shard is a share of a job.
func (s Shard) Check() error {
	if s.Count < 1 || s.Count > MaxShards {
		return invalidf("%d shards: want 1 to %d", s.Count, MaxShards)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return invalidf("shard %d of %d: the index counts from 0 to %d", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// ParseShard reads "I/N": share I (from 0) of N.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, invalidf("shard %q: want I/N, share I (from 0) of N", s)
	}
	var sh Shard
	var err1, err2 error
	sh.Index, err1 = strconv.Atoi(strings.TrimSpace(i))
	sh.Count, err2 = strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil {
		return Shard{}, invalidf("shard %q: want I/N with whole numbers, share I (from 0) of N", s)
	}
	return sh, sh.Check()
}

// The environment variables of job arrays FromEnv reads.
const (
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	EnvSlurmTaskStep  = "SLURM_ARRAY_TASK_STEP"
	EnvK8sIndex       = "JOB_COMPLETION_INDEX"
)

// ErrNoShardCount is wrapped by FromEnv's error for a Kubernetes index without a count: the
// caller must be told the count, so it is the caller's mistake, not the environment's.
var ErrNoShardCount = errors.New("no shard count")

// CountError is FromEnv's error where the count the caller was told is not the array's: the
// command line contradicts the array it runs in, so the caller words it as its mistake.
type CountError struct{ Asked, Array int }

func (e *CountError) Error() string {
	return fmt.Sprintf("%d shards asked for, but the Slurm array has %s=%d tasks", e.Asked, EnvSlurmTaskCount, e.Array)
}

// Unwrap makes a CountError ErrInvalid, as FromEnv's other errors are.
func (e *CountError) Unwrap() error { return ErrInvalid }

// FromEnv finds the shard of a task of a scheduler's job array in its environment (getenv
// is os.Getenv, or a map's lookup in tests):
//
//   - Slurm (sbatch --array): SLURM_ARRAY_TASK_ID counted from SLURM_ARRAY_TASK_MIN in steps
//     of SLURM_ARRAY_TASK_STEP, of SLURM_ARRAY_TASK_COUNT tasks (--array=0-7 and 1-8 both
//     give shards 0/8 to 7/8). An array of one task is refused: `sbatch --array=I`, which
//     runs task I of a larger array again, sets the same variables as a job of one shard
//     (COUNT 1, MIN I), and taken as that it fitted the whole job;
//   - a Kubernetes Indexed Job: JOB_COMPLETION_INDEX, of count shards (the Job's
//     completions), which the environment does not hold.
//
// count is the number of shards the caller was told (0 when not); where the environment
// has its own, they must agree. ok is false when the environment names no task; from says
// where the shard came from, for the user ("SLURM_ARRAY_TASK_ID=3 of SLURM_ARRAY_TASK_COUNT=4").
func FromEnv(getenv func(string) string, count int) (s Shard, from string, ok bool, err error) {
	num := func(name string, def int) (int, error) {
		v := getenv(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, invalidf("%s=%q is not a whole number", name, v)
		}
		return n, nil
	}
	if getenv(EnvSlurmTaskID) != "" {
		id, err := num(EnvSlurmTaskID, 0)
		if err != nil {
			return Shard{}, "", false, err
		}
		lo, err := num(EnvSlurmTaskMin, 0)
		if err != nil {
			return Shard{}, "", false, err
		}
		step, err := num(EnvSlurmTaskStep, 1)
		if err != nil {
			return Shard{}, "", false, err
		}
		n, err := num(EnvSlurmTaskCount, 0)
		if err != nil {
			return Shard{}, "", false, err
		}
		from = fmt.Sprintf("%s=%d of %s=%d", EnvSlurmTaskID, id, EnvSlurmTaskCount, n)
		if n == 0 {
			return Shard{}, from, false, invalidf("%s=%d is set but not %s: a Slurm array job sets both", EnvSlurmTaskID, id, EnvSlurmTaskCount)
		}
		if n == 1 {
			return Shard{}, from, false, invalidf("%s=%d of a Slurm array of one task (%s=1): the environment does not say which shard of how many that is (sbatch --array=%d, running one task of a larger array again, sets the same); give --shard %s, N the array's size (--shard 0/1 for the whole job)", EnvSlurmTaskID, id, EnvSlurmTaskCount, id, oneTaskShard(id))
		}
		if step < 1 || (id-lo)%step != 0 {
			return Shard{}, from, false, invalidf("%s=%d is not %s=%d plus a multiple of %s=%d", EnvSlurmTaskID, id, EnvSlurmTaskMin, lo, EnvSlurmTaskStep, step)
		}
		if count != 0 && count != n {
			return Shard{}, from, false, &CountError{Asked: count, Array: n}
		}
		s = Shard{Index: (id - lo) / step, Count: n}
		if err := s.Check(); err != nil {
			return Shard{}, from, false, fmt.Errorf("%s: %w (an --array with gaps, such as 0,2,5, cannot index shards)", from, err)
		}
		return s, from, true, nil
	}
	if getenv(EnvK8sIndex) != "" {
		id, err := num(EnvK8sIndex, 0)
		if err != nil {
			return Shard{}, "", false, err
		}
		from = fmt.Sprintf("%s=%d of %d", EnvK8sIndex, id, count)
		if count == 0 {
			return Shard{}, from, false, fmt.Errorf("%w: %w: %s=%d is set (a Kubernetes Indexed Job), and the environment does not hold the number of shards (the Job's completions)", ErrInvalid, ErrNoShardCount, EnvK8sIndex, id)
		}
		s = Shard{Index: id, Count: count}
		if err := s.Check(); err != nil {
			return Shard{}, from, false, fmt.Errorf("%s: %w", from, err)
		}
		return s, from, true, nil
	}
	return Shard{}, "", false, nil
}

// oneTaskShard is the --shard that runs task id of an array again: its place counted from
// the array's first task, which the environment of a one-task array does not hold, so both
// numberings the docs allow (--array=0-… and --array=1-…) are given.
func oneTaskShard(id int) string {
	if id < 1 {
		return fmt.Sprintf("%d/N", id)
	}
	return fmt.Sprintf("%d/N (for an --array numbered from 0; %d/N for one from 1)", id, id-1)
}

// Assign shares units among n shards by cost: the costliest unit first, each to the shard
// with the least work so far (the lowest index among equals), so that no shard holds more
// than the fair share plus one unit. It returns, for each shard, the indices of its units in
// the order of units. The result depends on the units alone.
func Assign(units []Unit, n int) [][]int {
	if n < 1 {
		panic("plan: Assign to no shards")
	}
	order := make([]int, len(units))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return units[order[a]].Cost() > units[order[b]].Cost() })
	load := make([]float64, n)
	out := make([][]int, n)
	for _, i := range order {
		best := 0
		for s := 1; s < n; s++ {
			if load[s] < load[best] {
				best = s
			}
		}
		load[best] += units[i].Cost()
		out[best] = append(out[best], i)
	}
	for _, idx := range out {
		sort.Ints(idx)
	}
	return out
}

// Of returns the units of shard s (Assign's share, in the order of units).
func Of(units []Unit, s Shard) []Unit {
	if s.Count <= 1 {
		return units
	}
	idx := Assign(units, s.Count)[s.Index]
	out := make([]Unit, len(idx))
	for k, i := range idx {
		out[k] = units[i]
	}
	return out
}

// CoverageError says which units a set of shards misses, holds more than once, or holds
// although the plan has no such unit.
type CoverageError struct {
	Missing, Doubled, Unknown []string
}

func (e *CoverageError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, fmt.Sprintf("%s missing: %s", plural.Count(len(e.Missing), "unit"), listIDs(e.Missing)))
	}
	if len(e.Doubled) > 0 {
		parts = append(parts, fmt.Sprintf("%s in more than one part: %s", plural.Count(len(e.Doubled), "unit"), listIDs(e.Doubled)))
	}
	if len(e.Unknown) > 0 {
		parts = append(parts, fmt.Sprintf("%s not in the plan: %s", plural.Count(len(e.Unknown), "unit"), listIDs(e.Unknown)))
	}
	return strings.Join(parts, "; ")
}

func (e *CoverageError) Unwrap() error { return ErrInvalid }

func listIDs(ids []string) string { return plural.First(ids, 8, " ") }

// Coverage checks that parts (each a list of unit IDs) hold every unit of the plan exactly
// once, and returns a *CoverageError naming the units missing, doubled or unknown.
func Coverage(units []Unit, parts [][]string) error {
	want := make(map[string]bool, len(units))
	for _, u := range units {
		want[u.ID()] = true
	}
	count := map[string]int{}
	unknown := map[string]bool{}
	for _, p := range parts {
		for _, id := range p {
			if !want[id] {
				unknown[id] = true
				continue
			}
			count[id]++
		}
	}
	var e CoverageError
	for _, u := range units {
		switch c := count[u.ID()]; {
		case c == 0:
			e.Missing = append(e.Missing, u.ID())
		case c > 1:
			e.Doubled = append(e.Doubled, u.ID())
		}
	}
	e.Unknown = sortedIDs(unknown)
	if len(e.Missing)+len(e.Doubled)+len(e.Unknown) == 0 {
		return nil
	}
	return &e
}
