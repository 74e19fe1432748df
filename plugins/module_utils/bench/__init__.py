# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark engine: submit a batch of Kubernetes objects, time each one from watch events.

Pieces, smallest first:
  labels.py     run-id / benchmark labels, owner namespace names, run id checks
  kinds.py      the resource kinds the engine watches, their keys and indexes
  world.py      the latest state of every watched object, with read tracking
  conditions.py terminal-state predicates (PVC Bound, pod Ready, VolumeAttachment attached ...)
  tracker.py    per-object start/end/error bookkeeping of one step (pure, no I/O)
  watch.py      one list+watch thread per kind, resumed on expiry, relisted on 410
  engine.py     run_step(): watches first, bounded concurrent submits, wait, step result
  manifests.py  the objects the benchmarks create
  csi_lifecycle.py, attach_stress.py  the two benchmarks as sequences of steps
  results.py    the result document (through module_utils/report), written after every step
  cleanup.py    delete everything one run (or every run) labelled
  options.py    a benchmark's options (its OPTIONS spec) completed with the spec's defaults
  runner.py     the table of benchmarks; plan once (stored in the document), measure a repetition, finalize
  modules.py    the one call of each bench module: bench_plan, bench_measure, bench_finish
  progress.py   the progress file the bench_measure action plugin relays to the controller
"""
