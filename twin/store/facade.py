"""Store: the one object the API server and the controllers hold, assembled from its concerns.

objects.py (object map, resourceVersions, lookups) < watch.py (event log, watchers) < writes.py
(create, update) < deletion.py (delete, finalizers) < patching.py (patch, apply): each layer is a
class that builds on the one before, and Store is the last of them.
"""
from __future__ import annotations

from ..registry.resources import Registry
from .deletion import SYSTEM_NAMESPACES
from .patching import Patching


class Store(Patching):
    """Every layer of the store, with the system namespaces created."""

    def __init__(self, registry: Registry | None = None):
        super().__init__(registry)
        self.request_count = 0
        for ns in SYSTEM_NAMESPACES:
            self.create(self.rt("", "v1", "namespaces"), None, {"metadata": {"name": ns}})
