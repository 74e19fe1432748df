# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmarks whose variants are StorageClasses (fio, sysbench): the classes checked, read and measured one way.

A variant's name is its class; the first variant measured is the baseline the report's ratios are against.
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError


def problems(classes, baseline):
    """What is wrong with storage_classes and baseline, each naming the field and the fix."""
    out = []
    if not classes or len(set(classes)) != len(classes):
        out.append("storage_classes must list distinct StorageClasses, at least one (got %s)" % list(classes))
    if baseline and baseline not in classes:
        out.append("baseline %s must be one of storage_classes (%s) or empty (the first)"
                   % (baseline, ", ".join(classes)))
    return out


def baseline_note(baseline):
    return "Baseline: %s (ratios are candidate / baseline)." % baseline


def titled(tool):
    """A benchmark's TITLE: '<tool>: a vs b', the classes in the order measured."""
    return lambda facts: "%s: %s" % (tool, " vs ".join(facts["storage_classes"]))


def read(client, names):
    """{class: {provisioner, parameters}} of every class; K8sError naming the missing ones (nothing is created)."""
    found = {}
    for name in names:
        sc = client.get("storage.k8s.io/v1", "StorageClass", name, missing_ok=True)
        if sc is not None:
            found[name] = {"provisioner": sc.get("provisioner"), "parameters": sc.get("parameters") or {}}
    missing = [c for c in names if c not in found]
    if missing:
        raise K8sError("StorageClass %s does not exist: create it first (the PMEM classes with "
                       "playbooks/deploy_pmem.yml) or fix storage_classes. Nothing was created."
                       % ", ".join(missing), 404, "NotFound")
    return found


def measured(ctx, plan):
    """(class, labels of its objects) of the repetition's variant, its class recorded in the variant's settings."""
    cls = ctx.variant
    if cls not in plan.classes:
        raise K8sError("variant %s is not one of the plan's storage_classes (%s): measure each class by its name"
                       % (cls, ", ".join(plan.storage_classes)), 422, "Invalid")
    sc = plan.classes[cls]
    ctx.settings.update(storageClassName=cls, provisioner=sc["provisioner"], parameters=sc["parameters"])
    return cls, dict(ctx.labels, **{L.VARIANT_LABEL: L.label_value(cls)})
