"""Cloud endpoints of the twin (ACK, ECS, ONTAP). Each registers itself in cloud.json."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..context import ClusterContext

# One "module" per cloud; each has `async def start(cluster) -> dict` whose keys are merged into cloud.json.
# Add a line per endpoint family; keep the list free of logic.
ENDPOINTS = [
    "alibaba",
    "ontap",
]


async def start(cluster: ClusterContext) -> dict[str, Any]:
    """Start every cloud endpoint; return what cloud.json lists (endpoints and credentials)."""
    doc: dict[str, Any] = {}
    for name in ENDPOINTS:
        module = importlib.import_module(f"{__name__}.{name}")
        doc.update(await module.start(cluster))
    return doc
