"""The aggregator's autoRegistrationController and crdRegistrationController: one local APIService (`v1.apps`,
`v1.` for the core group, `v1.snapshot.storage.k8s.io` for a CRD's group version ...) for every group version the
API server serves itself, `Available` with reason Local; a CRD group version that is no longer served loses its
APIService. APIServices made by users (a spec.service) are left alone."""
from __future__ import annotations

from ..apimachinery import errors
from ..kinds import apiservice
from ..store import now_iso
from .base import Controller, Kind

_AUTO = "kube-aggregator.kubernetes.io/automanaged"


class APIServiceRegistration(Controller):
    name = "apiservice-registration"
    apiservices_rt = Kind("apiregistration.k8s.io", "v1", "apiservices")

    def sync(self) -> None:
        reg = self.store.registry
        want = {f"{v}.{g}": (g, v) for g, vs in reg.group_versions().items() for v in vs}
        have = {e.obj["metadata"]["name"]: e.obj for e in self.store.list_entries(self.apiservices_rt)}
        for name, (g, v) in want.items():
            if name not in have:
                try:
                    self.store.create(self.apiservices_rt, None, apiservice.local(g, v, now_iso()), raw=True)
                except errors.ApiError as e:
                    if e.code != 409:
                        raise
        for name, obj in have.items():
            if name not in want and ((obj["metadata"].get("labels") or {}).get(_AUTO) == "true"):
                try:
                    self.store.delete(self.apiservices_rt, None, name)
                except errors.ApiError:
                    pass

    async def run(self) -> None:
        self.sync()
        async for _etype, _crd in self.watch("apiextensions.k8s.io", "v1", "customresourcedefinitions"):
            self.sync()
