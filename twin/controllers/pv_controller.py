"""kube-controller-manager's volume controllers: PV binder (persistentvolume-controller), pvc-protection and
pv-protection.

- PVC -> PV binding: a PV whose claimRef names the PVC (dynamically provisioned, or pre-bound by an admin) or a
  PVC whose spec.volumeName names an Available PV is bound: PV claimRef + status Bound; PVC spec.volumeName,
  annotations pv.kubernetes.io/bind-completed / bound-by-controller, status Bound with capacity/accessModes.
  A PVC without either, with no provisioner the twin runs, is matched to an Available PV of its class
  (smallest that fits). Dynamic ones get volume.kubernetes.io/storage-provisioner and the event
  ExternalProvisioning (Immediate) or WaitForFirstConsumer.
- Release: once the claim is gone the PV turns Released; reclaimPolicy Delete is carried out by the external
  provisioner (provisioner.py), Retain leaves it Released.
- kubernetes.io/pvc-protection: added to every PVC, removed from a deleted PVC once no pod that is not
  finished uses it. kubernetes.io/pv-protection: added to every PV, removed from a deleted PV that is not Bound.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..apimachinery import errors
from .base import Controller
from .csi import backends

log = logging.getLogger("twin")

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
ANN_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"


def parse_quantity(q: Any) -> int:
    """A resource.Quantity as bytes ("1Gi", "500M", "1073741824")."""
    s = str(q).strip()
    units = {"Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3, "Ti": 1024 ** 4, "Pi": 1024 ** 5, "Ei": 1024 ** 6,
             "k": 10 ** 3, "K": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18,
             "m": 0.001}
    for u in sorted(units, key=len, reverse=True):
        if s.endswith(u):
            return int(float(s[: -len(u)]) * units[u])
    return int(float(s))


def format_quantity(n: int) -> str:
    for u, f in (("Ti", 1024 ** 4), ("Gi", 1024 ** 3), ("Mi", 1024 ** 2), ("Ki", 1024)):
        if n % f == 0 and n >= f:
            return f"{n // f}{u}"
    return str(n)


def pod_uses_claim(pod: dict, claim: str) -> bool:
    return any((v.get("persistentVolumeClaim") or {}).get("claimName") == claim
               for v in pod.get("spec", {}).get("volumes") or [])


def pod_finished(pod: dict) -> bool:
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed")


class PVController(Controller):
    name = "persistentvolume-controller"

    def setup(self) -> None:
        self.announced: set[str] = set()
        self.by_claim: dict[tuple[str, str], str] = {}  # (namespace, claim) -> PV whose claimRef names it

    async def run(self) -> None:
        await asyncio.gather(self._pvcs(), self._pvs(), self._pods())

    async def _pvcs(self) -> None:
        async for etype, pvc in self.watch("", "v1", "persistentvolumeclaims"):
            await self.gate()
            try:
                if etype == "DELETED":
                    self._claim_gone(pvc)
                else:
                    self.sync_claim(pvc["metadata"]["namespace"], pvc["metadata"]["name"])
            except errors.ApiError as e:
                log.debug("pv controller: claim %s: %s", pvc["metadata"]["name"], e)

    async def _pvs(self) -> None:
        async for etype, pv in self.watch("", "v1", "persistentvolumes"):
            await self.gate()
            ref = pv["spec"].get("claimRef") or {}
            key = (ref.get("namespace") or "", ref.get("name") or "")  # "" where the claimRef lacks the field
            if etype == "DELETED":
                if self.by_claim.get(key) == pv["metadata"]["name"]:
                    self.by_claim.pop(key, None)
            elif ref.get("name"):
                self.by_claim[key] = pv["metadata"]["name"]
            try:
                if etype != "DELETED":
                    self.sync_volume(pv["metadata"]["name"])
            except errors.ApiError as e:
                log.debug("pv controller: volume %s: %s", pv["metadata"]["name"], e)

    async def _pods(self) -> None:
        """A finished or deleted pod may free a PVC that waits for pvc-protection."""
        async for etype, pod in self.watch("", "v1", "pods"):
            if etype == "DELETED" or pod_finished(pod):
                ns = pod["metadata"]["namespace"]
                for v in pod.get("spec", {}).get("volumes") or []:
                    claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
                    if claim and self.store.exists(self.pvc_rt, ns, claim):
                        try:
                            self.sync_claim(ns, claim)
                        except errors.ApiError:
                            pass

    # claims -------------------------------------------------------------------------------------
    def storage_class(self, name: str | None) -> dict | None:
        if not name:
            return None
        try:
            return self.store.get(self.sc_rt, None, name)
        except errors.ApiError:
            return None

    def sync_claim(self, ns: str, name: str) -> None:
        if not self.store.exists(self.pvc_rt, ns, name):
            return
        pvc = self.store.get(self.pvc_rt, ns, name)
        md = pvc["metadata"]
        if md.get("deletionTimestamp"):
            self._protect_release(pvc)
            return
        if PVC_PROTECTION not in (md.get("finalizers") or []):
            md["finalizers"] = (md.get("finalizers") or []) + [PVC_PROTECTION]
            pvc = self.store.update(self.pvc_rt, ns, name, pvc, _internal=True)
            md = pvc["metadata"]
        if pvc.get("status", {}).get("phase") == "Bound" and (md.get("annotations") or {}).get(ANN_BIND_COMPLETED):
            vol = pvc["spec"].get("volumeName")
            if vol and not self.store.exists(self.pv_rt, None, vol):
                self._set_claim_phase(pvc, "Lost")
            return
        vol = pvc["spec"].get("volumeName")
        if vol:
            if self.store.exists(self.pv_rt, None, vol):
                pv = self.store.get(self.pv_rt, None, vol)
                ref = pv["spec"].get("claimRef")
                if not ref or (ref.get("namespace") == ns and ref.get("name") == name
                               and ref.get("uid") in (None, "", md["uid"])):
                    self._bind(pvc, pv)
            return
        # a PV already points at this claim (provisioned for it, or pre-bound by an admin)
        pv_name = self.by_claim.get((ns, name))
        if pv_name and self.store.exists(self.pv_rt, None, pv_name):
            pv = self.store.get(self.pv_rt, None, pv_name)
            ref = pv["spec"].get("claimRef") or {}
            if ref.get("namespace") == ns and ref.get("name") == name and ref.get("uid") in (None, "", md["uid"]) \
                    and pv.get("status", {}).get("phase") in (None, "Pending", "Available", "Bound") \
                    and not pv["metadata"].get("deletionTimestamp"):
                self._bind(pvc, pv)
                return
        sc = self.storage_class(pvc["spec"].get("storageClassName"))
        if sc and sc.get("provisioner") in backends(self.cluster):
            self._announce_dynamic(pvc, sc)
            return
        self._match_static(pvc)

    def _announce_dynamic(self, pvc: dict, sc: dict) -> None:
        md = pvc["metadata"]
        ann = md.get("annotations") or {}
        if ann.get(ANN_PROVISIONER) != sc["provisioner"]:
            ann[ANN_PROVISIONER] = sc["provisioner"]
            ann[ANN_BETA_PROVISIONER] = sc["provisioner"]
            md["annotations"] = ann
            self.store.update(self.pvc_rt, md["namespace"], md["name"], pvc, _internal=True)
        if md["uid"] in self.announced:
            return
        self.announced.add(md["uid"])
        if sc.get("volumeBindingMode") == "WaitForFirstConsumer" and not ann.get(ANN_SELECTED_NODE):
            self.event(pvc, "Normal", "WaitForFirstConsumer",
                       "waiting for first consumer to be created before binding")
        else:
            self.event(pvc, "Normal", "ExternalProvisioning",
                       f"Waiting for a volume to be created either by the external provisioner '{sc['provisioner']}' "
                       "or manually by the system administrator. If volume creation is delayed, please verify "
                       "that the provisioner is running and correctly registered.")

    def _match_static(self, pvc: dict) -> None:
        want = parse_quantity(pvc["spec"].get("resources", {}).get("requests", {}).get("storage", "0"))
        cls = pvc["spec"].get("storageClassName") or ""
        modes = set(pvc["spec"].get("accessModes") or [])
        best = None
        for e in self.store.list_entries(self.pv_rt):
            pv = e.obj
            if pv.get("status", {}).get("phase") != "Available" or pv["spec"].get("claimRef") \
                    or pv["metadata"].get("deletionTimestamp"):
                continue
            if (pv["spec"].get("storageClassName") or "") != cls or not modes <= set(pv["spec"].get("accessModes") or []):
                continue
            size = parse_quantity(pv["spec"].get("capacity", {}).get("storage", "0"))
            if size >= want and (best is None or size < best[0]):
                best = (size, pv["metadata"]["name"])
        if best:
            self._bind(pvc, self.store.get(self.pv_rt, None, best[1]), by_controller=True)

    def _bind(self, pvc: dict, pv: dict, by_controller: bool = False) -> None:
        md = pvc["metadata"]
        ns, name = md["namespace"], md["name"]
        ref = pv["spec"].get("claimRef") or {}
        if ref.get("uid") != md["uid"] or ref.get("name") != name:
            pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": name,
                                      "uid": md["uid"], "apiVersion": "v1", "resourceVersion": md["resourceVersion"]}
            if by_controller or not ref:
                pv["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
            pv = self.store.update(self.pv_rt, None, pv["metadata"]["name"], pv, _internal=True)
        if pv.get("status", {}).get("phase") != "Bound":
            pv["status"] = {"phase": "Bound", "lastPhaseTransitionTime": _now()}
            pv = self.store.update(self.pv_rt, None, pv["metadata"]["name"], pv, subresource="status")
        ann = md.setdefault("annotations", {})
        if pvc["spec"].get("volumeName") != pv["metadata"]["name"] or ann.get(ANN_BIND_COMPLETED) != "yes":
            if not pvc["spec"].get("volumeName"):
                ann[ANN_BOUND_BY_CONTROLLER] = "yes"
            pvc["spec"]["volumeName"] = pv["metadata"]["name"]
            ann[ANN_BIND_COMPLETED] = "yes"
            pvc = self.store.update(self.pvc_rt, ns, name, pvc, _internal=True)
        status = {"phase": "Bound", "accessModes": pv["spec"].get("accessModes") or pvc["spec"].get("accessModes"),
                  "capacity": {"storage": pv["spec"].get("capacity", {}).get("storage", "0")}}
        if pvc.get("status") != status:
            pvc["status"] = status
            self.store.update(self.pvc_rt, ns, name, pvc, subresource="status")

    def _set_claim_phase(self, pvc: dict, phase: str) -> None:
        pvc["status"] = dict(pvc.get("status") or {}, phase=phase)
        self.store.update(self.pvc_rt, pvc["metadata"]["namespace"], pvc["metadata"]["name"], pvc, subresource="status")
        if phase == "Lost":
            self.event(pvc, "Warning", "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")

    def _protect_release(self, pvc: dict) -> None:
        md = pvc["metadata"]
        if PVC_PROTECTION not in (md.get("finalizers") or []):
            return
        for e in self.store.list_entries(self.pods_rt, md["namespace"]):
            if pod_uses_claim(e.obj, md["name"]) and not pod_finished(e.obj):
                return  # still in use: pvc-protection keeps it
        self.store.finalize(self.pvc_rt, md["namespace"], md["name"], PVC_PROTECTION)

    def _claim_gone(self, pvc: dict) -> None:
        vol = pvc["spec"].get("volumeName")
        if vol and self.store.exists(self.pv_rt, None, vol):
            self.sync_volume(vol)

    # volumes ------------------------------------------------------------------------------------
    def sync_volume(self, name: str) -> None:
        if not self.store.exists(self.pv_rt, None, name):
            return
        pv = self.store.get(self.pv_rt, None, name)
        md = pv["metadata"]
        phase = pv.get("status", {}).get("phase")
        if md.get("deletionTimestamp"):
            if PV_PROTECTION in (md.get("finalizers") or []) and phase != "Bound":
                self.store.finalize(self.pv_rt, None, name, PV_PROTECTION)
            elif PV_PROTECTION in (md.get("finalizers") or []) and not self._claim_alive(pv):
                self.store.finalize(self.pv_rt, None, name, PV_PROTECTION)
            return
        if PV_PROTECTION not in (md.get("finalizers") or []):
            md["finalizers"] = (md.get("finalizers") or []) + [PV_PROTECTION]
            pv = self.store.update(self.pv_rt, None, name, pv, _internal=True)
        ref = pv["spec"].get("claimRef")
        if not ref:
            if phase != "Available":
                self._set_volume_phase(pv, "Available")
            return
        if self._claim_alive(pv):
            claim = self.store.get(self.pvc_rt, ref["namespace"], ref["name"])
            if phase != "Bound" or claim.get("status", {}).get("phase") != "Bound":
                self.sync_claim(ref["namespace"], ref["name"])
            return
        if ref.get("uid") and phase in ("Bound", "Available", "Pending", None):
            if phase == "Bound" or self._was_bound(pv):
                self._set_volume_phase(pv, "Released")
            elif phase is None or phase == "Pending":
                self._set_volume_phase(pv, "Available")

    def _was_bound(self, pv: dict) -> bool:
        return bool((pv["metadata"].get("annotations") or {}).get("pv.kubernetes.io/provisioned-by"))

    def _claim_alive(self, pv: dict) -> bool:
        ref = pv["spec"].get("claimRef") or {}
        if not ref.get("name") or not self.store.exists(self.pvc_rt, ref.get("namespace"), ref["name"]):
            return False
        claim = self.store.get(self.pvc_rt, ref.get("namespace"), ref["name"])
        return not ref.get("uid") or claim["metadata"]["uid"] == ref["uid"]

    def _set_volume_phase(self, pv: dict, phase: str) -> None:
        pv["status"] = {"phase": phase, "lastPhaseTransitionTime": _now()}
        self.store.update(self.pv_rt, None, pv["metadata"]["name"], pv, subresource="status")


def _now() -> str:
    from ..store import now_iso

    return now_iso()
