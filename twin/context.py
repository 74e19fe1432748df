"""What the parts of a running twin may use of the cluster that runs them.

twin/fleet/cluster.py builds the twin: it imports the API server, the controllers and the cloud endpoints and hands
itself to each of them. They take it as a ClusterContext, this protocol, and never import twin.fleet.cluster, so
the import graph runs one way: fleet/cluster.py on top, the parts below it, this file under them all.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: none of these modules imports this one back
    from aiohttp import web

    from .cloud_state import CloudState
    from .faults import Faults
    from .store import Store


class ClusterContext(Protocol):
    # what the cluster is
    dir: Path
    name: str  # the ACK cluster name of a fleet member; empty for the single twin
    seed: str
    time_scale: float  # cluster seconds per wall-clock second are 1 / time_scale
    crd_sets: tuple[str, ...]
    nodes: list[dict]
    fleet_token: str
    ontap_password: str  # the fleet's shared ONTAP credential; empty for a single twin (its ONTAP makes one)
    extra_clusters: int
    settings: dict[str, Any]

    # what runs in it
    store: Store
    faults: Faults
    cloud: CloudState
    trident: Any  # the Trident controller's state once it runs (controllers/trident.py)
    authn: Any  # the API server's Authenticator (apiserver/auth/authentication.py): legacy_token() signs Secret tokens

    # registries the parts fill: CSI backends by driver (controllers/csi.py), POST /_twin/storage figures,
    # client-side throttles (controllers/tokenbucket.py), admin verbs of POST /_twin/{verb}, stop hooks
    csi_backends: dict[str, Any]
    storage_stats: dict[str, Callable[[dict[str, Any]], Any]]
    throttles: dict[str, Any]
    admin_handlers: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]]
    on_stop: list[Callable[[], Any]]
    cloud_requests: Callable[[], dict[str, int]] | None
    alibaba: dict[str, Any]

    async def serve_app(self, app: web.Application, tls: bool = True) -> str: ...
