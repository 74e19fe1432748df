# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How bench_measure and bench_finish find the run that bench_plan started: one set of options
(bench/modules.py RUN_ARG_SPEC)."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  run_id:
    description: The run id that M(storageperf.k8s.bench_plan) returned.
    type: str
    required: true
  reports_dir:
    description: The directory the run's plan was stored under (M(storageperf.k8s.bench_plan)'s O(reports_dir)).
    type: path
    required: true
"""
