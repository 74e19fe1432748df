# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Terminal states (docs/reference/kubernetes.md, "The CSI lifecycle's terminal states") as predicates over the world.

A predicate takes a View and returns None when the object has reached its terminal state, else
a short text saying what is still missing ("PVC Pending", "1 VolumeAttachment left"); that text
is what a timed-out object is reported with when it has no Warning event to show instead.

  create / clone          PVC Bound                               pvc_bound
  publish                 pod Ready and, when the CSI driver needs attaching, a VolumeAttachment of
                          each of its volumes on the pod's node with status.attached true    published
  unpublish               pod gone and no VolumeAttachment left for its volumes              unpublished
  snapshot                VolumeSnapshot status.readyToUse true                              snapshot_ready
  delete clone / volume   PVC gone and its PV gone                                           pvc_and_pv_gone
  delete snapshot         VolumeSnapshot gone and its VolumeSnapshotContent gone             snapshot_gone
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import View

    # None: the terminal state holds, else what is missing (Optional: an alias is an expression, and the
    # modules' Python 3.8 has no X | None there)
    Predicate = Callable[[View], Optional[str]]


PVC, PV, POD, VA, VS, VSC = ("PersistentVolumeClaim", "PersistentVolume", "Pod", "VolumeAttachment",
                             "VolumeSnapshot", "VolumeSnapshotContent")


# object-level tests -----------------------------------------------------------------------------
def phase(obj: Mapping[str, Any] | None) -> Any:
    return ((obj or {}).get("status") or {}).get("phase")


def pvc_is_bound(obj: Mapping[str, Any] | None) -> bool:
    return phase(obj) == "Bound"


def pod_is_ready(obj: Mapping[str, Any] | None) -> bool:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def va_is_attached(obj: Mapping[str, Any] | None) -> bool:
    return ((obj or {}).get("status") or {}).get("attached") is True


def vs_is_ready(obj: Mapping[str, Any] | None) -> bool:
    return ((obj or {}).get("status") or {}).get("readyToUse") is True


# marks the world records (first receive time a condition held), per kind
MARK_RULES = {
    PVC: {"bound": pvc_is_bound},
    POD: {"ready": pod_is_ready},
    VA: {"attached": va_is_attached},
    VS: {"ready": vs_is_ready},
}


def _pod_state(pod: Mapping[str, Any]) -> str:
    st = (pod or {}).get("status") or {}
    waiting = [cs.get("state", {}).get("waiting", {}).get("reason") for cs in st.get("containerStatuses") or []]
    waiting = [w for w in waiting if w]
    text = "pod %s" % (st.get("phase") or "Pending")
    if not (pod.get("spec") or {}).get("nodeName"):
        text += " (not scheduled)"
    if waiting:
        text += " (%s)" % ", ".join(sorted(set(waiting)))
    return text


def volume_name(view: View, pvc_key: str) -> str | None:
    """The PV a PVC is bound to (also after the PVC is gone), or None."""
    pvc = view.last(PVC, pvc_key)
    return ((pvc or {}).get("spec") or {}).get("volumeName")


# predicates --------------------------------------------------------------------------------------
def pvc_bound(pvc_key: str) -> Predicate:
    def check(view: View) -> str | None:
        pvc = view.get(PVC, pvc_key)
        if pvc is None:
            return "PVC not seen"
        return None if pvc_is_bound(pvc) else "PVC %s" % (phase(pvc) or "Pending")
    return check


def published(pod_key: str, pvc_keys: Sequence[str], attach_required: bool) -> Predicate:
    """Pod Ready and, when attaching is required, every volume attached to the pod's node."""
    def check(view: View) -> str | None:
        pod = view.get(POD, pod_key)
        if pod is None:
            return "pod not seen"
        missing = []
        if not pod_is_ready(pod):
            missing.append(_pod_state(pod))
        if attach_required:
            node = (pod.get("spec") or {}).get("nodeName")
            waiting = 0
            for pvc_key in pvc_keys:
                pv = volume_name(view, pvc_key)
                vas = view.lookup(VA, "pv", pv) if pv else []
                if not any(va_is_attached(va) and (not node or va["spec"].get("nodeName") == node) for va in vas):
                    waiting += 1
            if waiting:
                missing.append("%d of %d volume%s not attached" % (waiting, len(pvc_keys), "" if len(pvc_keys) == 1 else "s"))
        return "; ".join(missing) or None
    return check


def unpublished(pod_key: str, pvc_keys: Sequence[str]) -> Predicate:
    """Pod gone and no VolumeAttachment left for any of its volumes."""
    def check(view: View) -> str | None:
        missing = []
        pod = view.get(POD, pod_key)
        if pod is not None:
            missing.append(_pod_state(pod) + (" terminating" if pod["metadata"].get("deletionTimestamp") else ""))
        left = 0
        for pvc_key in pvc_keys:
            pv = volume_name(view, pvc_key)
            if pv:
                left += len(view.lookup(VA, "pv", pv))
        if left:
            missing.append("%d VolumeAttachment%s left" % (left, "" if left == 1 else "s"))
        return "; ".join(missing) or None
    return check


def snapshot_ready(vs_key: str) -> Predicate:
    def check(view: View) -> str | None:
        vs = view.get(VS, vs_key)
        if vs is None:
            return "VolumeSnapshot not seen"
        if vs_is_ready(vs):
            return None
        err = ((vs.get("status") or {}).get("error") or {}).get("message")
        return "VolumeSnapshot not ready" + (": %s" % err if err else "")
    return check


def pvc_and_pv_gone(pvc_key: str, pv_must_go: bool = True) -> Predicate:
    """PVC gone and (with reclaimPolicy Delete) its PV gone; with Retain the PV must be Released."""
    def check(view: View) -> str | None:
        missing = []
        pvc = view.get(PVC, pvc_key)
        if pvc is not None:
            missing.append("PVC %s" % ("terminating" if pvc["metadata"].get("deletionTimestamp") else "still there"))
        pv_name = volume_name(view, pvc_key)
        if pv_name:
            pv = view.get(PV, pv_name)
            if pv is not None and (pv_must_go or phase(pv) not in ("Released", "Failed")):
                missing.append("PV %s %s" % (pv_name, phase(pv) or ""))
        return "; ".join(m.strip() for m in missing) or None
    return check


def snapshot_gone(vs_key: str, content_must_go: bool = True) -> Predicate:
    def check(view: View) -> str | None:
        missing = []
        vs = view.get(VS, vs_key)
        if vs is not None:
            missing.append("VolumeSnapshot %s" % ("terminating" if vs["metadata"].get("deletionTimestamp") else "still there"))
        last = view.last(VS, vs_key)
        content = ((last or {}).get("status") or {}).get("boundVolumeSnapshotContentName")
        if content and content_must_go and view.get(VSC, content) is not None:
            missing.append("VolumeSnapshotContent %s still there" % content)
        return "; ".join(missing) or None
    return check
