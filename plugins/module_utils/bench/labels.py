# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Labels every benchmark object carries, owner namespace names, and run id checks."""
from __future__ import annotations

import hashlib
import re

RUN_ID_LABEL = "storageperf.k8s/run-id"
BENCHMARK_LABEL = "storageperf.k8s/benchmark"
# which variant and repetition an owner namespace belongs to (for people reading the cluster)
VARIANT_LABEL = "storageperf.k8s/variant"
REPETITION_LABEL = "storageperf.k8s/repetition"

_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_RUN_ID = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def run_id_problem(run_id: str | None) -> str | None:
    """None when run_id can be a label value and a directory name, else what is wrong and how to fix it."""
    if not run_id:
        return "run_id is empty: leave it unset to get a generated one, or give letters, digits, '-', '_' and '.'"
    if len(run_id) > 63 or not _RUN_ID.match(run_id):
        return ("run_id %r cannot be a Kubernetes label value: use at most 63 letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit" % run_id)
    return None


def label_value(text: object) -> str:
    """text made into a valid label value (variant names have spaces)."""
    value = re.sub(r"[^-A-Za-z0-9_.]+", "-", str(text)).strip("-_.")[:63].rstrip("-_.")
    return value if _LABEL_VALUE.match(value) else ""


def run_labels(run_id: str, benchmark: str) -> dict[str, str]:
    return {RUN_ID_LABEL: run_id, BENCHMARK_LABEL: label_value(benchmark)}


def run_selector(run_id: str | None = None) -> str:
    """Label selector of one run's objects, or of every storageperf run when run_id is None."""
    return "%s=%s" % (RUN_ID_LABEL, run_id) if run_id else RUN_ID_LABEL


def owner_namespace(run_id: str, benchmark: str, variant_index: int, repetition: int) -> str:
    """A DNS-1123 name unique per run, variant and repetition: <benchmark>-<hash of run id>-<v>-<r>.

    The hash (not the run id itself) keeps the name short and valid whatever the run id holds.
    """
    digest = hashlib.sha1(run_id.encode("utf-8")).hexdigest()[:8]
    base = re.sub(r"[^a-z0-9]+", "-", benchmark.lower()).strip("-")[:30] or "bench"
    return "%s-%s-%d-%d" % (base, digest, int(variant_index), int(repetition))
