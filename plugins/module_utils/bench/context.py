# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one repetition of a benchmark needs: the client, its owner namespace and labels, the
engine options and where each step result goes (the result document, written at once)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import manifests as M
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Options
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client


class Context:
    def __init__(self, client: Client, run_id: str, benchmark: str, namespace: str, options: Options,
                 record: Callable[[dict[str, Any]], object], variant: str | None = "", repetition: int | None = 1) -> None:
        self.client = client
        self.run_id = run_id
        self.benchmark = benchmark
        self.namespace = namespace
        self.options = options
        self.record = record  # record(step result dict) -> None; writes the result document
        self.labels = L.run_labels(run_id, benchmark)
        self.variant = variant
        self.repetition = repetition
        # what the repetition learns beyond its steps, written to the document when it ends (runner.measure):
        self.info: dict[str, Any] = {}  # on the run (its namespace, a Job's own figures)
        self.settings: dict[str, Any] = {}  # added to the variant's settings (the StorageClass measured, the node it ran on)
        self.variant_facts: dict[str, Any] = {}  # on the variant (the tool's version and stray output)
        self.components: dict[str, Any] = {}  # the document's components (a tool version read from its output)
        self.notes: list[str] = []  # the document's notes

    def key(self, name: str) -> str:
        return "%s/%s" % (self.namespace, name)

    def create_namespace(self) -> None:
        """The owner namespace of this repetition, labelled like everything in it."""
        labels = dict(self.labels)
        if self.repetition:
            labels[L.REPETITION_LABEL] = str(self.repetition)
        variant = L.label_value(self.variant or "")
        if variant:
            labels[L.VARIANT_LABEL] = variant
        try:
            self.client.create(M.namespace(self.namespace, labels))
        except K8sError as e:
            if e.status != 409:
                raise
            existing = self.client.get("v1", "Namespace", self.namespace)
            if (existing.get("metadata", {}).get("labels") or {}).get(L.RUN_ID_LABEL) != self.run_id:  # type: ignore[union-attr]  # get raises, not None
                raise K8sError("namespace %s exists and does not belong to run %s: give another run_id, or remove "
                               "the namespace" % (self.namespace, self.run_id), 409, "AlreadyExists") from e


def skipped(name: str, label: str, unit: str, reason: str) -> dict[str, Any]:
    """A step result for a step that did not run, with the reason (never silently left out)."""
    return {"name": name, "label": label, "unit": unit, "status": "skipped", "reason": reason}
