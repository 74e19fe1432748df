"""Error answers of the Alibaba Cloud endpoints, in the two shapes clients meet.

The POP gateway (signatures, access keys, flow control, unknown actions, and every ECS error) answers
{"RequestId", "HostId", "Code", "Message", "Recommend"}; aliyun-python-sdk-core reads Code and Message from
it. The ACK (CS) service's own errors are {"code", "message", "requestId", "status"}, which the SDK cannot
parse (it reports SDK.UnknownServerError with the raw body), so clients must read both.
"""
from __future__ import annotations

import json
import uuid

from aiohttp import web


def request_id() -> str:
    return str(uuid.uuid4()).upper()


class PopError(Exception):
    """An error as the POP gateway (or an RPC service behind it) returns it."""

    def __init__(self, status: int, code: str, message: str, host: str = "",
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.host = host
        self.headers = headers or {}  # e.g. x-acs-retry-after on a throttled call

    def body(self, rid: str) -> dict:
        return {"RequestId": rid, "HostId": self.host, "Code": self.code, "Message": self.message,
                "Recommend": f"https://api.aliyun.com/troubleshoot?q={self.code}&product=twin"}

    def response(self, rid: str | None = None) -> web.Response:
        rid = rid or request_id()
        return web.Response(status=self.status, body=json.dumps(self.body(rid)), content_type="application/json",
                            headers=self.headers)


class CsError(PopError):
    """An error of the ACK service itself (cluster, addon or node pool level)."""

    def body(self, rid: str) -> dict:
        return {"code": self.code, "message": self.message, "requestId": rid, "status": self.status}
