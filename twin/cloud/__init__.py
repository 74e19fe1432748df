"""Cloud endpoints of the twin (ACK, ECS, ONTAP). Each registers itself in cloud.json."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..cluster import Cluster


async def start(cluster: "Cluster") -> dict[str, Any]:
    """Start every cloud endpoint; return what cloud.json lists (endpoints and credentials)."""
    return {}
