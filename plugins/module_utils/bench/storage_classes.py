# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmarks whose variants are StorageClasses (fio, sysbench): the classes checked, read and measured one way.

A variant's name is its class; the first variant measured is the baseline the report's ratios are against.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.quantity import quantity_problem
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as LIM

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client


# The options of every benchmark whose variants are StorageClasses (fio, sysbench); each OPTIONS spec extends them
# with its own, so these defaults are written once.
CLASS_OPTIONS: dict[str, dict[str, Any]] = {
    "storage_classes": dict(type="list", elements="str", default=[]),
    "baseline": dict(type="str"),
    "pvc_size": dict(type="str", default="100Gi"),
    "timeout": dict(type="int", default=0),
    "cleanup": dict(type="bool", default=True),
    "cleanup_timeout": dict(type="float", default=600.0),
}
CLASS_LIMITS = {"storage_classes": LIM.STORAGE_CLASSES, "pvc_size": LIM.PVC_SIZE, "timeout": LIM.TIMEOUT,
                "cleanup_timeout": LIM.TIMEOUT}
CLASS_DOCS = {
    "storage_classes": [
        "StorageClasses to measure, each a variant named after it (give the same list as O(variants), the baseline "
        "first, since the report's ratios are against the document's first variant). Required.",
    ],
    "baseline": [
        "The class the ratios are computed against, named in the document's notes; empty = the first.",
    ],
    "pvc_size": [
        "Requested size of each PVC.",
    ],
    "cleanup_timeout": [
        "Seconds the cleanup after a class may take.",
    ],
}


class ClassPlan(Protocol):
    """What measured() reads of a plan (fio.Plan, sysbench.Plan): the classes and what read() found."""
    storage_classes: list[str]
    classes: dict[str, dict[str, Any]]


def problems(params: Mapping[str, Any]) -> list[str]:
    """What is wrong with the CLASS_OPTIONS of a benchmark's options (storage_classes, baseline, pvc_size), each
    naming the field and the fix."""
    classes, baseline = list(params["storage_classes"]), params["baseline"]
    out = []
    if not classes or len(set(classes)) != len(classes):
        out.append("storage_classes must list distinct StorageClasses, at least one (got %s)" % classes)
    if baseline and baseline not in classes:
        out.append("baseline %s must be one of storage_classes (%s) or empty (the first)"
                   % (baseline, ", ".join(classes)))
    size = quantity_problem("pvc_size", params["pvc_size"])
    if size:
        out.append(size)
    return out


def sweep_point(plan: object) -> None:
    """A StorageClass benchmark measures no sweep: its variants are the classes."""
    return None


def cleans_up(options: Mapping[str, Any], last: bool) -> bool:
    """After each class (its own namespace) unless cleanup is off: the next class starts without this one's volume."""
    return bool(options["cleanup"])


def baseline_note(baseline: str) -> str:
    return "Baseline: %s (ratios are candidate / baseline)." % baseline


def titled(tool: str) -> Callable[[Mapping[str, Any]], str]:
    """A benchmark's TITLE: '<tool>: a vs b', the classes in the order measured."""
    return lambda facts: "%s: %s" % (tool, " vs ".join(facts["storage_classes"]))


def read(client: Client, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """{class: {provisioner, parameters}} of every class; K8sError naming the missing ones (nothing is created)."""
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        sc = client.get("storage.k8s.io/v1", "StorageClass", name, missing_ok=True)
        if sc is not None:
            found[name] = {"provisioner": sc.get("provisioner"), "parameters": sc.get("parameters") or {}}
    missing = [c for c in names if c not in found]
    if missing:
        raise K8sError("StorageClass %s does not exist: create it first (the PMEM classes with "
                       "storageperf.k8s.deploy_pmem) or fix storage_classes. Nothing was created."
                       % ", ".join(missing), 404, "NotFound")
    return found


def measured(ctx: Context, plan: ClassPlan) -> tuple[str, dict[str, str]]:
    """(class, labels of its objects) of the repetition's variant, its class recorded in the variant's settings."""
    cls = ctx.variant
    if cls is None or cls not in plan.classes:  # None: a benchmark whose variants share one namespace
        raise K8sError("variant %s is not one of the plan's storage_classes (%s): measure each class by its name"
                       % (cls, ", ".join(plan.storage_classes)), 422, "Invalid")
    sc = plan.classes[cls]
    ctx.settings.update(storageClassName=cls, provisioner=sc["provisioner"], parameters=sc["parameters"])
    return cls, dict(ctx.labels, **{L.VARIANT_LABEL: L.label_value(cls)})
