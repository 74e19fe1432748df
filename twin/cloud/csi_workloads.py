"""The Kubernetes side of the ACK CSI addons: what `kubectl -n kube-system get ds,deploy,pods` shows.

- csi-plugin: a DaemonSet in kube-system, one pod per node.
- csi-provisioner (unmanaged clusters): a Deployment in kube-system with its ReplicaSet and 2 pods.
  managed-csiprovisioner runs in ACK's managed control plane, so a managed cluster shows no provisioner pods.
Each container carries `--feature-gates=<the addon's FeatureGate>`; an addon config change (twin/cloud/addons.py)
rolls the pods, so a client can check that the Kubernetes side agrees with the addon config.

The DaemonSet controller (twin/controllers/daemonset.py) makes and rolls csi-plugin's pods, and ACK reports the
addon `active` only once that rollout is done (what `kubectl rollout status ds/csi-plugin` waits for). The
provisioner's pods are the Deployment and ReplicaSet controllers' when the twin runs them; without them this module
writes them itself, so no pod is owned twice.
"""
from __future__ import annotations

import asyncio
import copy
from typing import TYPE_CHECKING, Any

from ..controllers.podstatus import controller_ref, random_suffix, template_hash
from ..controllers.serviceaccounts import ensure_service_account
from ..store import now_iso

if TYPE_CHECKING:
    from ..context import ClusterContext

NS = "kube-system"
REGISTRY = "registry-cn-hangzhou-vpc.ack.aliyuncs.com/acs"
PROVISIONER_REPLICAS = 2
ROLLOUT_TIMEOUT = 900.0  # cluster seconds an addon's rollout may take before ACK reports it failed
# ... but never less wall time than this: the twin's own CPU time per pod (controllers, scheduler, kubelet) does not
# shrink with --time-scale, and a 500-node rollout at 0.01 spends more of it than 900 scaled seconds
ROLLOUT_TIMEOUT_WALL_FLOOR = 300.0


def _has_controller(kind: str) -> bool:
    from .. import controllers

    return any(kind in entry.lower() for entry in getattr(controllers, "CONTROLLER_MODULES", []))


def _rolled_out(ds: dict) -> bool:
    """kubectl's DaemonSet rollout status: the generation observed, every desired pod updated and available."""
    st = ds.get("status") or {}
    desired = st.get("desiredNumberScheduled", 0)
    return (ds["metadata"].get("generation", 1) <= st.get("observedGeneration", 0)
            and st.get("updatedNumberScheduled", 0) >= desired and st.get("numberAvailable", 0) >= desired)


def _container(name: str, image: str, gates: str, extra: list[str]) -> dict:
    args = list(extra) + ([f"--feature-gates={gates}"] if gates else [])
    return {"name": name, "image": image, "imagePullPolicy": "IfNotPresent", "args": args,
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}


class CsiWorkloads:
    def __init__(self, cluster: ClusterContext) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.ds_rt = self.store.rt("apps", "v1", "daemonsets")
        self.deploy_rt = self.store.rt("apps", "v1", "deployments")
        self.rs_rt = self.store.rt("apps", "v1", "replicasets")
        self.pod_rt = self.store.rt("", "v1", "pods")
        self.own_deploy = not (_has_controller("deployment") and _has_controller("replicaset"))

    @property
    def cloud(self) -> Any:
        return self.cluster.cloud

    # templates --------------------------------------------------------------------------------
    def _gates(self, addon: str) -> str:
        a = self.cloud.addons.get(addon)
        return str((a.config if a else {}).get("FeatureGate") or "")

    def _version(self, addon: str) -> str:
        a = self.cloud.addons.get(addon)
        return a.version if a else "v1.30.4-8c2e0b1-aliyun"

    def plugin_template(self) -> dict:
        c = _container("csi-plugin", f"{REGISTRY}/csi-plugin:{self._version('csi-plugin')}", self._gates("csi-plugin"),
                       ["--endpoint=unix://csi/csi.sock", "--v=2", "--driver=oss,nas,disk"])
        return {"metadata": {"labels": {"app": "csi-plugin"}},
                "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical",
                         "serviceAccountName": "alicloud-csi-node", "containers": [c],
                         "tolerations": [{"operator": "Exists"}]}}

    def provisioner_template(self) -> dict:
        c = _container("csi-provisioner", f"{REGISTRY}/csi-plugin:{self._version('csi-provisioner')}",
                       self._gates("csi-provisioner"), ["--endpoint=unix://csi/csi.sock", "--v=2",
                                                        "--driver=nas,disk,oss", "--run-controller-service=true",
                                                        "--run-node-service=false"])
        return {"metadata": {"labels": {"app": "csi-provisioner"}},
                "spec": {"priorityClassName": "system-cluster-critical",
                         "serviceAccountName": "alicloud-csi-provisioner", "containers": [c]}}

    # lifecycle --------------------------------------------------------------------------------
    def ensure(self) -> None:
        """Create what the current addons imply (at start, and when an addon appears or goes)."""
        if "csi-plugin" in self.cloud.addons and not self.store.exists(self.ds_rt, NS, "csi-plugin"):
            ensure_service_account(self.store, NS, "alicloud-csi-node")
            self.store.create(self.ds_rt, NS, {
                "metadata": {"name": "csi-plugin", "namespace": NS, "labels": {"app": "csi-plugin"}},
                "spec": {"selector": {"matchLabels": {"app": "csi-plugin"}}, "template": self.plugin_template(),
                         "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}}}})
        has_prov = "csi-provisioner" in self.cloud.addons
        exists = self.store.exists(self.deploy_rt, NS, "csi-provisioner")
        if has_prov and not exists:
            ensure_service_account(self.store, NS, "alicloud-csi-provisioner")
            dep = self.store.create(self.deploy_rt, NS, {
                "metadata": {"name": "csi-provisioner", "namespace": NS, "labels": {"app": "csi-provisioner"}},
                "spec": {"replicas": PROVISIONER_REPLICAS, "selector": {"matchLabels": {"app": "csi-provisioner"}},
                         "template": self.provisioner_template()}})
            if self.own_deploy:
                self._roll_deployment(dep)
        elif exists and not has_prov:
            self.store.delete(self.deploy_rt, NS, "csi-provisioner", propagation="Background")

    def on_change(self, reason: str) -> None:
        if reason.startswith("addon "):
            self.ensure()

    async def roll(self, addon: str) -> None:
        """Restart the addon's pods with its current config (ModifyClusterAddon's rollout)."""
        if addon == "csi-plugin" and self.store.exists(self.ds_rt, NS, "csi-plugin"):
            self._set_template(self.ds_rt, "csi-plugin", self.plugin_template())
            await asyncio.wait_for(self._rolled_out("csi-plugin"),
                                   max(ROLLOUT_TIMEOUT * self.cluster.time_scale, ROLLOUT_TIMEOUT_WALL_FLOOR))
        elif addon == "csi-provisioner" and self.store.exists(self.deploy_rt, NS, "csi-provisioner"):
            dep = self._set_template(self.deploy_rt, "csi-provisioner", self.provisioner_template())
            if self.own_deploy:
                self._roll_deployment(dep)

    async def _rolled_out(self, name: str) -> None:
        """Until the DaemonSet's controller has seen its template and every desired pod is updated and available."""
        w = self.store.watch(self.ds_rt, NS, field_selector=f"metadata.name={name}")
        try:
            while True:
                e = self.store.objects[self.ds_rt.key].get((NS, name))
                if e is None or _rolled_out(e.obj):
                    return
                await w.queue.get()
        finally:
            self.store.unwatch(w)

    def _set_template(self, rt: Any, name: str, template: dict) -> dict:
        obj = self.store.get(rt, NS, name)
        obj["spec"]["template"] = template
        obj["spec"]["template"].setdefault("metadata", {}).setdefault("annotations", {})[
            "kubectl.kubernetes.io/restartedAt"] = now_iso()
        return self.store.update(rt, NS, name, obj)

    # pods (when no workload controller runs) -----------------------------------------------------
    def _pods_of(self, uid: str) -> list[dict]:
        return [e.obj for e in list(self.store.objects[self.pod_rt.key].values())
                if any(r.get("uid") == uid for r in e.obj["metadata"].get("ownerReferences") or [])]

    def _delete_pods(self, uid: str) -> None:
        for p in self._pods_of(uid):
            self.store.delete(self.pod_rt, NS, p["metadata"]["name"], grace_seconds=0)

    def _pod(self, owner: dict, template: dict, node: str, labels: dict[str, str], ip: str) -> dict:
        ts = now_iso()
        spec = copy.deepcopy(template["spec"])
        spec["nodeName"] = node
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        base = owner["metadata"]["name"]
        statuses = [{"name": c["name"], "image": c["image"], "imageID": c["image"] + "@sha256:" + "0" * 64,
                     "ready": True, "started": True, "restartCount": 0,
                     "containerID": "containerd://" + random_suffix(12),
                     "state": {"running": {"startedAt": ts}}, "lastState": {}} for c in spec["containers"]]
        conds = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": ts}
                 for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
        # the DaemonSet/ReplicaSet controllers leave the name to the API server (generateName), which retries
        # its own collisions; a client-side random name collides at a few thousand nodes
        return {"metadata": {"generateName": f"{base}-", "namespace": NS,
                             "labels": dict(template["metadata"].get("labels") or {}, **labels),
                             "ownerReferences": [controller_ref(owner)]},
                "spec": spec,
                "status": {"phase": "Running", "conditions": conds, "containerStatuses": statuses,
                           "hostIP": ip, "podIP": ip, "podIPs": [{"ip": ip}], "startTime": ts, "qosClass": "Burstable"}}

    def _node_ips(self) -> list[tuple[str, str]]:
        return [(n["name"], n["name"].split(".", 1)[1] if "." in n["name"] else "10.0.0.1") for n in self.cluster.nodes]

    def _roll_deployment(self, dep: dict) -> None:
        template = dep["spec"]["template"]
        h = template_hash(template)
        for e in list(self.store.objects[self.rs_rt.key].values()):
            rs = e.obj
            if any(r.get("uid") == dep["metadata"]["uid"] for r in rs["metadata"].get("ownerReferences") or []):
                self._delete_pods(rs["metadata"]["uid"])
                self.store.delete(self.rs_rt, NS, rs["metadata"]["name"], grace_seconds=0)
        rs_template = copy.deepcopy(template)
        rs_template["metadata"].setdefault("labels", {})["pod-template-hash"] = h
        rs = self.store.create(self.rs_rt, NS, {
            "metadata": {"name": f"csi-provisioner-{h}", "namespace": NS,
                         "labels": dict(rs_template["metadata"]["labels"]),
                         "ownerReferences": [controller_ref(dep)]},
            "spec": {"replicas": PROVISIONER_REPLICAS,
                     "selector": {"matchLabels": {"app": "csi-provisioner", "pod-template-hash": h}},
                     "template": rs_template}})
        nodes = self._node_ips()[:PROVISIONER_REPLICAS] or [("", "10.0.0.1")]
        for i in range(PROVISIONER_REPLICAS):
            node, ip = nodes[i % len(nodes)]
            self.store.create(self.pod_rt, NS, self._pod(rs, rs_template, node, {}, ip))
        n = PROVISIONER_REPLICAS
        rs = self.store.get(self.rs_rt, NS, rs["metadata"]["name"])
        rs["status"] = {"replicas": n, "readyReplicas": n, "availableReplicas": n, "fullyLabeledReplicas": n,
                        "observedGeneration": rs["metadata"].get("generation", 1)}
        self.store.update(self.rs_rt, NS, rs["metadata"]["name"], rs, subresource="status")
        dep = self.store.get(self.deploy_rt, NS, "csi-provisioner")
        ts = now_iso()
        dep["status"] = {"replicas": n, "readyReplicas": n, "availableReplicas": n, "updatedReplicas": n,
                         "observedGeneration": dep["metadata"].get("generation", 1),
                         "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                                         "message": "Deployment has minimum availability.",
                                         "lastUpdateTime": ts, "lastTransitionTime": ts},
                                        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                                         "message": f'ReplicaSet "{rs["metadata"]["name"]}" has successfully progressed.',
                                         "lastUpdateTime": ts, "lastTransitionTime": ts}]}
        self.store.update(self.deploy_rt, NS, "csi-provisioner", dep, subresource="status")
