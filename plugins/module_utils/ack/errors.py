# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The error every Alibaba Cloud call of the collection raises, and which of them are worth another try."""
from __future__ import annotations


from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

RETRY_CODES = ("InternalError", "UnknownError", "ServiceUnavailable", "SDK.HttpError", "SDK.ServerUnreachable")
RETRY_STATUS = (429, 500, 502, 503, 504)


class AliyunError(StoragePerfError):
    """A failed Alibaba Cloud call, with a message for the person running the play (never the secret)."""

    def __init__(self, msg: str, code: str | None = None, status: int | None = None, request_id: str | None = None,
                 action: str | None = None) -> None:
        super().__init__(msg, code=code, request_id=request_id)
        self.msg = msg
        self.code = code
        self.status = status
        self.request_id = request_id
        self.action = action
        self.retry_after: float | None = None  # seconds, when the gateway said how long to wait (x-acs-retry-after)

    @property
    def retryable(self) -> bool:
        return bool(self.code and (self.code.startswith("Throttling") or self.code in RETRY_CODES)) or \
            self.status in RETRY_STATUS

    @property
    def throttled(self) -> bool:
        return bool(self.code and self.code.startswith("Throttling")) or self.status == 429
