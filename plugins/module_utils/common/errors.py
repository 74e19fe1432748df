# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one exception base of the collection.

Every failure a module reports is a StoragePerfError (or a subclass named after the system that
failed: K8sError, AliyunError, TridentError, ...). It carries what the person running the play needs:
the message, a hint that says how to fix it, and the partial result, so that a module fails
through one path (StoragePerfModule.fail_from_exception) and nothing it already did is hidden.
"""
from __future__ import annotations

from typing import Any, Mapping


class StoragePerfError(Exception):
    """msg: what went wrong; hint: how to fix it; result: what was done before the failure; details: extra facts."""

    def __init__(self, msg: str, hint: str | None = None, result: Mapping[str, Any] | None = None, **details: Any) -> None:
        super().__init__(msg)
        self.msg = msg
        self.hint = hint
        self.result = dict(result or {})
        self.details = details

    def message(self) -> str:
        """The message with its hint, as the module prints it."""
        if self.hint and self.hint not in self.msg:
            return "%s. %s" % (self.msg.rstrip("."), self.hint)
        return self.msg

    def __str__(self) -> str:
        return self.msg


class WaitTimeout(StoragePerfError):
    """Something did not reach the awaited state in time; last is the last thing seen (or None)."""

    def __init__(self, msg: str, last: Any = None, hint: str | None = None, result: Mapping[str, Any] | None = None,
                 **details: Any) -> None:
        super().__init__(msg, hint=hint, result=result, **details)
        self.last = last
