// Package plan divides the distillation of a whole model into work units and runs them: the
// long-filter layers of a checkpoint are cut into units of at most Options.Chunk channels,
// the units are shared among N shards by their cost, and each unit is fitted with train.Run
// and kept by a Store, so that a run interrupted at any moment goes on where it stopped.
//
// # Overview
//
//   - Units cuts layers into units; Unit.ID names one ("layers.0.filter_fn.[0:64]") and
//     Unit.Cost weighs it (channels × length × order).
//   - Shard is a share I of N (0-based, as every index on ssmlab's command line);
//     ParseShard reads "I/N", FromEnv a scheduler's job-array index (Slurm, a Kubernetes
//     Indexed Job). Assign gives each shard its units, Coverage checks a set of shards'
//     units against the plan (nothing missing, nothing twice).
//   - Execute fits the units of one shard, skipping those its Store holds already, and
//     reports each step to a callback.
//   - Manifest, LayerRecord and ChannelRecord are what a distilled checkpoint records of
//     its layers and channels (the manifest file and the safetensors metadata).
//
// # Determinism
//
// Units, Assign and Coverage are functions of their arguments alone: every shard of a job
// computes the same plan without talking to the others. Execute fits a unit with the job's
// spec and seed, and train.Run is deterministic for its seed, so a unit fitted by a shard
// on one machine equals the same unit fitted by a single run on another with the same
// backend. Times (ChannelRecord.Seconds) are the only measured values; Manifest.Stable drops
// them.
//
// The package touches no files: a Source gives the kernels of a unit and a Store keeps the
// results (package sessions/checkpoint implements both).
package plan
