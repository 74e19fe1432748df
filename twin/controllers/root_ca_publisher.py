"""The root CA certificate publisher (pkg/controller/certificates/rootcacertpublisher/publisher.go): every active
namespace has ConfigMap kube-root-ca.crt whose data is exactly {ca.crt: the cluster CA, PEM} with the description
annotation; a namespace that appears gets it, and a changed or deleted one is put back.

Like serviceaccounts.py it acts inside the write, so the projected token volume the ServiceAccount admission plugin
adds to a pod names a ConfigMap that already exists when the kubelet mounts it.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..apimachinery import errors
from .base import Controller, Kind
from .serviceaccounts import active_namespaces

if TYPE_CHECKING:
    from ..registry.resources import ResourceType

NAME = "kube-root-ca.crt"
DESCRIPTION_KEY = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such "
               "as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
               "distributions of Kubernetes clusters.")


class RootCACertPublisher(Controller):
    name = "root-ca-cert-publisher"
    ns_rt = Kind("", "v1", "namespaces")
    cm_rt = Kind("", "v1", "configmaps")

    def setup(self) -> None:
        self.ca = (self.cluster.dir / "pki" / "ca.crt").read_text()  # written by fleet/cluster.py before controllers
        for ns in active_namespaces(self.store):
            self.sync(ns)

    def on_change(self, rtype: ResourceType, etype: str, obj: dict, old: dict | None) -> None:
        md = obj["metadata"]
        if rtype.key == self.ns_rt.key and etype != "DELETED":
            self.sync(md["name"])
        elif rtype.key == self.cm_rt.key and md["name"] == NAME:
            self.sync(md["namespace"])

    def sync(self, ns: str) -> None:
        """publisher.go syncNamespace: create the ConfigMap, or rewrite its data and annotation when they differ."""
        nse = self.store.objects[self.ns_rt.key].get(("", ns))
        if nse is None or nse.obj["metadata"].get("deletionTimestamp"):
            return
        data = {"ca.crt": self.ca}
        try:
            if not self.store.exists(self.cm_rt, ns, NAME):
                self.store.create(self.cm_rt, ns, {"metadata": {"name": NAME, "namespace": ns,
                                                                "annotations": {DESCRIPTION_KEY: DESCRIPTION}},
                                                   "data": data})
                return
            cm = self.store.get(self.cm_rt, ns, NAME)
            annotations = cm["metadata"].get("annotations") or {}
            if cm.get("data") == data and annotations.get(DESCRIPTION_KEY):
                return
            cm["data"] = data
            cm["metadata"]["annotations"] = dict(annotations, **{DESCRIPTION_KEY: DESCRIPTION})
            self.store.update(self.cm_rt, ns, NAME, cm)
        except errors.ApiError as e:
            if e.code not in (403, 404, 409):  # raced with the namespace's deletion or another writer
                raise

    async def run(self) -> None:
        await asyncio.Event().wait()  # everything arrives through the store hook
