# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PMEM StorageClasses of the CSI local plugin (pmem_storageclass): checked, planned, then created,
updated in place, recreated (force) or deleted.

Classes this collection creates carry app.kubernetes.io/managed-by=storageperf.k8s; state=absent deletes
only such a class, so a rollback never removes a class someone else made.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.pmem.plugin import (
    DRIVER,
    LVM_TYPES,
    MANAGED_BY,
    MANAGER,
    PMEM_TYPES,
    PmemError,
)

SC_API = "storage.k8s.io/v1"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def storageclass_problems(p: Mapping[str, Any]) -> list[str]:
    """Problems with the pmem_storageclass options, each naming the option and the fix."""
    problems = []
    name = p.get("name") or ""
    if not _DNS1123.match(name):
        problems.append("name %r is not a valid StorageClass name: use lower case letters, digits, '-' and '.'" % name)
    if p.get("pmem_type") not in PMEM_TYPES:
        problems.append("pmem_type %r is not a PMEM type the local plugin knows: use one of %s (the csi-local-plugin "
                        "exits on anything else)" % (p.get("pmem_type"), ", ".join(PMEM_TYPES)))
    if p.get("lvm_type") is not None and p.get("lvm_type") not in LVM_TYPES:
        problems.append("lvm_type %r: use one of %s" % (p.get("lvm_type"), ", ".join(LVM_TYPES)))
    if p.get("pmem_type") == "direct":
        for key in ("lvm_type", "vg_name"):
            if p.get(key):
                problems.append("%s only applies to pmem_type lvm: remove it, or set pmem_type to lvm" % key)
    if p.get("volume_binding_mode") not in (None, "WaitForFirstConsumer"):
        problems.append("volume_binding_mode %r: local PMEM volumes are created on the node the pod is scheduled to, so "
                        "only WaitForFirstConsumer works" % p.get("volume_binding_mode"))
    for key, value in (p["extra_parameters"] or {}).items():
        if key in ("volumeType", "pmemType", "lvmType", "vgName", "nodeAffinity", "fsType"):
            problems.append("extra_parameters.%s is set by its own option (pmem_type, lvm_type, vg_name, node_affinity, "
                            "fs_type): use that option instead" % key)
        if isinstance(value, (dict, list)):
            problems.append("extra_parameters.%s must be a string, StorageClass parameters are strings" % key)
    return problems


def build_storageclass(p: Mapping[str, Any]) -> dict[str, Any]:
    """The StorageClass manifest, shaped like the seed's csi-pmem-lvm."""
    params = {"volumeType": "PMEM"}
    if p["pmem_type"] != "lvm":
        params["pmemType"] = p["pmem_type"]
    if p.get("lvm_type"):
        params["lvmType"] = p["lvm_type"]
    if p.get("vg_name"):
        params["vgName"] = p["vg_name"]
    if p["node_affinity"]:
        params["nodeAffinity"] = "true"
    if p.get("fs_type"):
        params["fsType"] = p["fs_type"]
    for key, value in (p["extra_parameters"] or {}).items():
        params[key] = str(value).lower() if isinstance(value, bool) else str(value)
    labels = dict(p["labels"] or {})
    labels[MANAGED_BY] = MANAGER
    md = {"name": p["name"], "labels": labels}
    if p.get("default_class"):
        md["annotations"] = {DEFAULT_CLASS_ANNOTATION: "true"}
    sc = {"apiVersion": SC_API, "kind": "StorageClass", "metadata": md, "provisioner": DRIVER,
          "parameters": params, "reclaimPolicy": p["reclaim_policy"],
          "volumeBindingMode": "WaitForFirstConsumer",
          "allowVolumeExpansion": bool(p["allow_volume_expansion"])}
    if p.get("mount_options"):
        sc["mountOptions"] = list(p["mount_options"])
    return sc


IMMUTABLE_SC_FIELDS = ("provisioner", "parameters", "reclaimPolicy", "volumeBindingMode", "mountOptions")


def storageclass_changes(existing: dict[str, Any], desired: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(mutable changes, immutable changes) from the existing StorageClass to the desired one.

    Only allowVolumeExpansion, labels and annotations may change in place; the API server refuses the rest
    (ValidateStorageClassUpdate), so those need the class deleted and created again.
    """
    immutable = []
    for f in IMMUTABLE_SC_FIELDS:
        have, want = existing.get(f), desired.get(f)
        if f == "reclaimPolicy":
            have = have or "Delete"
        if f == "parameters":
            have = have or {}
        if f == "mountOptions":
            have = have or []
            want = want or []
        if have != want:
            immutable.append(f)
    mutable = []
    if bool(existing.get("allowVolumeExpansion")) != bool(desired.get("allowVolumeExpansion")):
        mutable.append("allowVolumeExpansion")
    emd, dmd = existing.get("metadata") or {}, desired["metadata"]
    for k, v in (dmd.get("labels") or {}).items():
        if (emd.get("labels") or {}).get(k) != v:
            mutable.append("metadata.labels.%s" % k)
    for k, v in (dmd.get("annotations") or {}).items():
        if (emd.get("annotations") or {}).get(k) != v:
            mutable.append("metadata.annotations.%s" % k)
    return mutable, immutable


def is_managed(obj: dict[str, Any] | None) -> bool:
    return ((obj or {}).get("metadata", {}).get("labels") or {}).get(MANAGED_BY) == MANAGER


def sc_view(sc: dict[str, Any] | None) -> dict[str, Any]:
    """The fields of a StorageClass a person compares (for diffs), without server bookkeeping."""
    if not sc:
        return {}
    md = sc.get("metadata") or {}
    out = {"metadata": {"name": md.get("name")}}
    if md.get("labels"):
        out["metadata"]["labels"] = md["labels"]
    ann = {k: v for k, v in (md.get("annotations") or {}).items()
           if k != "kubectl.kubernetes.io/last-applied-configuration"}
    if ann:
        out["metadata"]["annotations"] = ann
    for f in ("provisioner", "parameters", "reclaimPolicy", "volumeBindingMode", "allowVolumeExpansion", "mountOptions"):
        if sc.get(f) is not None:
            out[f] = sc[f]
    return out


def ensure_storageclass(client: Any, p: Mapping[str, Any], check_mode: bool = False, diff: bool = False,
                        warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Make the class p["name"] as p asks (state present/absent); the module's result.

    Raises PmemError before any write when the options are wrong or an immutable field differs without
    force; a failure after a write carries what was done as its partial result.
    """
    result = dict(changed=False, action="none", changed_fields=[], storageclass={})
    if p["state"] == "present":
        problems = storageclass_problems(p)
        if problems:
            raise PmemError("; ".join(problems), result=result, problems=problems)
    try:
        existing = client.get(SC_API, "StorageClass", p["name"], missing_ok=True)
        if p["state"] == "absent":
            _delete(client, p["name"], existing, result, check_mode, warn)
        else:
            _apply(client, p, existing, result, check_mode)
    except StoragePerfError as exc:
        exc.result = dict(result, **exc.result)
        raise
    if diff and (p["state"] == "present" or result["action"] == "deleted"):
        result["diff"] = dict(before=sc_view(existing), after=result["storageclass"])
    return result


def _delete(client: Any, name: str, existing: dict[str, Any] | None, result: dict[str, Any], check_mode: bool,
            warn: Callable[[str], None] | None) -> None:
    if existing is None:
        return
    if not is_managed(existing):
        result.update(action="left", storageclass=sc_view(existing))
        if warn is not None:
            warn("StorageClass %s was not created by storageperf.k8s (no label %s=%s): left in place"
                 % (name, MANAGED_BY, MANAGER))
        return
    if not check_mode:
        client.delete(SC_API, "StorageClass", name)
    result.update(changed=True, action="deleted")


def _apply(client: Any, p: Mapping[str, Any], existing: dict[str, Any] | None, result: dict[str, Any], check_mode: bool) -> None:
    desired = build_storageclass(p)
    if existing is None:
        created = client.create(desired, dry_run=check_mode)
        result.update(changed=True, action="created", storageclass=sc_view(created or desired))
        return
    if not is_managed(existing) and not storageclass_changes(existing, desired)[1]:
        # the same class, made by someone else: use it as it is and never claim it
        desired["metadata"]["labels"] = (existing.get("metadata") or {}).get("labels") or {}
    mutable, immutable = storageclass_changes(existing, desired)
    result["changed_fields"] = sorted(set(mutable + immutable))
    if immutable and not p["force"]:
        raise PmemError("StorageClass %s exists with other %s; those fields cannot change in place"
                        % (p["name"], ", ".join(immutable)),
                        hint="Delete the class, choose another name, or set force=true to delete and recreate it "
                             "(volumes already provisioned keep their PVs)",
                        existing=sc_view(existing), wanted=sc_view(desired))
    if immutable:
        if not check_mode:
            client.delete(SC_API, "StorageClass", p["name"])
            created = client.create(desired)
        else:
            created = desired
        result.update(changed=True, action="recreated", storageclass=sc_view(created))
    elif mutable:
        patch = {"allowVolumeExpansion": desired["allowVolumeExpansion"],
                 "metadata": {k: v for k, v in desired["metadata"].items() if k in ("labels", "annotations")}}
        updated = client.patch(SC_API, "StorageClass", p["name"], patch, dry_run=check_mode)
        result.update(changed=True, action="updated", storageclass=sc_view(updated or desired))
    else:
        result["storageclass"] = sc_view(existing)
