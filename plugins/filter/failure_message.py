# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The failure_message filter; documentation in failure_message.yml."""


import re
from typing import Any, Callable


def failure_message(result: object, default: str = "failed") -> str:
    """The message of a failed task's result; for a loop, the first failed item's own message (Ansible's own
    message for a loop is only 'One or more items failed')."""
    if not isinstance(result, dict):
        return default
    for item in result.get("results") or ():
        if isinstance(item, dict) and item.get("failed") and item.get("msg"):
            return re.sub(r"\s+", " ", str(item["msg"])).strip()
    msg = result.get("msg")
    return re.sub(r"\s+", " ", str(msg)).strip() if msg else default


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"failure_message": failure_message}
