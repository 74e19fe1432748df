"""The life of an ACK addon config change (ModifyClusterAddon): updating -> active, or failed.

ACK accepts the new config at once (GetClusterAddonInstance shows it, state `updating`), rolls the addon's
pods, and ends `active` when they run, or `failed` when the component rejects its flags. The CSI components
parse `FeatureGate` with k8s.io/component-base's featuregate: an unknown gate, a value that is not a Go
bool, a bare name, or a locked gate set against its default makes the binary exit, so the addon ends failed.
The known gates are the driver's (kubernetes-sigs/alibaba-cloud-csi-driver pkg/features/features.go).
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any
from collections.abc import Awaitable, Callable

if TYPE_CHECKING:
    from ..context import ClusterContext

log = logging.getLogger("twin")

ADDON_UPDATE_SECONDS = 30.0  # a CSI addon config rollout on ACK takes tens of seconds; scaled by --time-scale

KNOWN_GATES = {
    "DiskADController", "DiskParallelAttach", "DiskParallelDetach", "DisableExpandAutoSnapshots",
    "EnableDeleteAutoSnapshots", "UpdatedOssfsVersion", "RundCSIProtocol3", "EnableVolumeGroupSnapshots",
    "AlinasMountProxy", "ConstrainFusePodDeleteRV", "DiskHighDensityMode", "EnableFUSEFdPassing",
    "EnableOssfs2Recovery", "AllAlpha", "AllBeta",
}
LOCKED_GATES = {"DisableExpandAutoSnapshots": True}
GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
            "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def gate_errors(text: str) -> list[str]:
    """What featuregate.Set would complain about in a --feature-gates value (empty: it starts)."""
    problems = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        name, eq, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not eq:
            problems.append(f"missing bool value for {name}")
        elif name not in KNOWN_GATES:
            problems.append(f"unrecognized feature gate: {name}")
        elif value not in GO_BOOLS:
            problems.append(f"invalid value of {name}={value}, err: strconv.ParseBool: parsing {value!r}: invalid syntax")
        elif name in LOCKED_GATES and GO_BOOLS[value] != LOCKED_GATES[name]:
            problems.append(f"cannot set feature gate {name} to {value}, feature is locked to {LOCKED_GATES[name]}")
    return problems


class AddonUpdates:
    """Runs ModifyClusterAddon changes in the background, one at a time per addon."""

    def __init__(self, cluster: ClusterContext, roll: Callable[[str], Awaitable[None]] | None = None) -> None:
        self.cluster = cluster
        self.roll = roll  # restarts the addon's pods on the Kubernetes side
        self.fail_next: set[str] = set()  # addons whose next change ends failed (admin door)
        self.tasks: dict[str, asyncio.Task] = {}

    @property
    def cloud(self) -> Any:
        return self.cluster.cloud

    def busy(self, name: str) -> bool:
        return self.cloud.addons[name].state in ("updating", "upgrading", "deleting")

    def start(self, name: str, config: dict[str, Any]) -> None:
        addon = self.cloud.addons[name]
        addon.state = "updating"
        self.cloud.set_addon_config(name, config)  # shown at once, as ACK shows the submitted config
        self.tasks[name] = asyncio.ensure_future(self._finish(name))

    async def _finish(self, name: str) -> None:
        try:
            await asyncio.sleep(ADDON_UPDATE_SECONDS * self.cluster.time_scale)
            addon = self.cloud.addons.get(name)
            if addon is None:
                return
            problems = gate_errors(str(addon.config.get("FeatureGate") or ""))
            if name in self.fail_next:
                self.fail_next.discard(name)
                problems.append("injected failure")
            if problems:
                log.info("addon %s failed: %s", name, "; ".join(problems))
                addon.state = "failed"
            else:
                if self.roll is not None:
                    await self.roll(name)
                addon.state = "active"
            self.cloud.notify(f"addon {name}")
        except asyncio.CancelledError:
            raise
        except Exception:  # a twin bug must not leave the addon updating forever
            log.exception("addon %s update crashed", name)
            self.cloud.addons[name].state = "failed"
        finally:
            self.tasks.pop(name, None)


def parse_config(text: Any) -> dict[str, Any] | None:
    """ModifyClusterAddon's body.config is a JSON object serialised into a string."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
