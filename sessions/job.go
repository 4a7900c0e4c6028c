package sessions

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Job is a training or distillation job: its specification and, once it has run, its
// report, both JSON defined by the package that runs jobs, kept as they are (compacted); its
// status; the target it fits and the filter it made; and its log.
type Job struct {
	ID     string
	Kind   string          // what the job does, e.g. "distill"
	Spec   json.RawMessage // the job's input
	Report json.RawMessage // its result; nil until it has run
	// Status is where the job is; "" when not recorded (files before version 2).
	Status JobStatus
	// Target is the ID of the item the job fits; "" for none.
	Target string
	// Result is the ID of the filter it made; "" for none (yet).
	Result string
	// Log says what happened, one line an event.
	Log []string
}

// JobStatus is where a job is in its life.
type JobStatus string

// The job statuses.
const (
	JobRunning   JobStatus = "running"
	JobDone      JobStatus = "done"
	JobFailed    JobStatus = "failed"
	JobCancelled JobStatus = "cancelled"
	// JobInterrupted is a job whose program ended (quit, killed) while it ran: a job saved
	// as running reads back (Unmarshal, Load) as interrupted.
	JobInterrupted JobStatus = "interrupted"
)

// JobStatuses lists the statuses.
var JobStatuses = []JobStatus{JobRunning, JobDone, JobFailed, JobCancelled, JobInterrupted}

// ParseJobStatus returns the status named s ("" for none).
func ParseJobStatus(s string) (JobStatus, error) {
	if st := JobStatus(s); s == "" || slices.Contains(JobStatuses, st) {
		return st, nil
	}
	names := make([]string, len(JobStatuses))
	for i, st := range JobStatuses {
		names[i] = string(st)
	}
	return "", invalidf("job status %q: want one of %s", s, strings.Join(names, ", "))
}

func (j Job) validate() error {
	if !utf8.ValidString(j.Kind) || !utf8.ValidString(j.Target) || !utf8.ValidString(j.Result) {
		return invalidf("the kind or a link is not valid UTF-8")
	}
	if _, err := ParseJobStatus(string(j.Status)); err != nil {
		return err
	}
	for _, l := range j.Log {
		if !utf8.ValidString(l) {
			return invalidf("the log is not valid UTF-8")
		}
	}
	if j.Spec != nil && !json.Valid(j.Spec) {
		return invalidf("the spec is not valid JSON")
	}
	if j.Report != nil && !json.Valid(j.Report) {
		return invalidf("the report is not valid JSON")
	}
	return nil
}

// Job returns the job with the given ID.
func (s *Session) Job(id string) (Job, bool) {
	if k, i := s.Lookup(id); k == KindJob {
		return s.Jobs[i], true
	}
	return Job{}, false
}

// AddJob adds a job and returns its new ID (j.ID is ignored).
func (s *Session) AddJob(j Job) (string, error) {
	j.ID = ""
	if err := j.validate(); err != nil {
		return "", err
	}
	j = copyJob(j)
	j.Spec, j.Report = compactJSON(j.Spec), compactJSON(j.Report)
	j.ID = s.newID('j')
	s.Jobs = append(s.Jobs, j)
	s.change()
	return j.ID, nil
}

// ReplaceJob replaces the record of the job with j's ID (its status, report, log…).
func (s *Session) ReplaceJob(j Job) error {
	k, i := s.Lookup(j.ID)
	if k != KindJob {
		return notFound(j.ID)
	}
	if err := j.validate(); err != nil {
		return within(fmt.Sprintf("job %q", j.ID), err)
	}
	j = copyJob(j)
	j.Spec, j.Report = compactJSON(j.Spec), compactJSON(j.Report)
	s.Jobs[i] = j
	s.change()
	return nil
}

// SetJobReport stores the report of a job.
func (s *Session) SetJobReport(id string, report json.RawMessage) error {
	j, ok := s.Job(id)
	if !ok {
		return notFound(id)
	}
	j.Report = report
	return s.ReplaceJob(j)
}

func copyJob(j Job) Job {
	j.Spec = slices.Clone(j.Spec)
	j.Report = slices.Clone(j.Report)
	j.Log = slices.Clone(j.Log)
	return j
}
