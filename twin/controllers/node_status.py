"""One list field of the nodes' status (the kubelet's volumesInUse, the attach-detach controller's
volumesAttached), written at most once per event-loop turn however many volumes changed, and only when it
changed; an empty list leaves the field out, as the API server serialises it."""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class NodeStatusList:
    def __init__(self, store: Any, nodes_rt: Any, field: str, value: Callable[[str], list]) -> None:
        self.store, self.nodes_rt, self.field, self.value = store, nodes_rt, field, value
        self.pending: set[str] = set()

    def soon(self, node: str) -> None:
        if node not in self.pending:
            self.pending.add(node)
            asyncio.get_running_loop().call_soon(self.now, node)

    def now(self, node: str) -> None:
        self.pending.discard(node)
        if not self.store.exists(self.nodes_rt, None, node):
            return
        obj = self.store.get(self.nodes_rt, None, node)
        st = obj.setdefault("status", {})
        want = self.value(node)
        if (st.get(self.field) or []) == want:
            return
        if want:
            st[self.field] = want
        else:
            st.pop(self.field, None)
        self.store.update(self.nodes_rt, None, node, obj, subresource="status")
