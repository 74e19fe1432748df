"""The STS endpoint (API version 2015-04-01), RPC style, with the one action RRSA needs: AssumeRoleWithOIDC.

AssumeRoleWithOIDC is anonymous (the OIDC token is the proof, no AccessKey signs it); parameters arrive in the
query or a form body. The twin is the cluster's only OIDC issuer: it writes one service-account token to
<dir>/rrsa/token and accepts exactly that token, for one RAM role trusted by one OIDC provider (cloud.json
`alibaba.rrsa` names all three). Every successful call mints fresh STS credentials that the twin's gateway
then accepts for ACK and ECS calls, so a client that took its keys from STS is checked end to end.

Answers have the documented shape: {RequestId, OIDCTokenInfo, AssumedRoleUser, Credentials{AccessKeyId,
AccessKeySecret, SecurityToken, Expiration}}; errors the POP shape (errors.py).
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import secrets
from pathlib import Path
from typing import Any

from aiohttp import web

from .errors import PopError, request_id
from .gateway import Gateway

VERSION = "2015-04-01"
ACTION = "sts:AssumeRoleWithOIDC"
MAX_SESSION_DURATION = 3600  # a RAM role's default MaxSessionDuration
AUDIENCE = "sts.aliyuncs.com"  # what ACK's RRSA tokens are issued for


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _iso(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class StsApi:
    def __init__(self, gateway: Gateway, directory: Path, cluster_id: str, seed: str,
                 namespace: str = "default", service_account: str = "storageperf") -> None:
        self.gw = gateway
        account = str(int(hashlib.sha1(f"{seed}account".encode()).hexdigest()[:13], 16)).rjust(16, "1")[:16]
        self.role_arn = f"acs:ram::{account}:role/storageperf-rrsa"
        self.provider_arn = f"acs:ram::{account}:oidc-provider/ack-rrsa-{cluster_id}"
        self.issuer = f"https://oidc-ack-twin.aliyuncs.com/{cluster_id}"
        self.subject = f"system:serviceaccount:{namespace}:{service_account}"
        self.token = self._issue()
        self.token_file = Path(directory) / "rrsa" / "token"
        self.token_file.parent.mkdir(parents=True, exist_ok=True)
        self.token_file.write_text(self.token)
        self.token_file.chmod(0o600)
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.handle)

    def _issue(self) -> str:
        """A JWT-shaped service-account token (RS256 in ACK; here an HMAC, since only the twin checks it)."""
        now = int(datetime.datetime.now(datetime.UTC).timestamp())
        self.issued_at, self.expires_at = now, now + 86400
        self.claims: dict[str, Any] = {"iss": self.issuer, "sub": self.subject, "aud": [AUDIENCE],
                                       "iat": self.issued_at, "exp": self.expires_at}
        head = _b64(json.dumps({"alg": "HS256", "kid": "twin", "typ": "JWT"}).encode())
        body = _b64(json.dumps(self.claims).encode())
        sig = _b64(hmac.new(secrets.token_bytes(32), f"{head}.{body}".encode(), hashlib.sha256).digest())
        return f"{head}.{body}.{sig}"

    def describe(self) -> dict[str, str]:
        return {"role_arn": self.role_arn, "oidc_provider_arn": self.provider_arn,
                "oidc_token_file": str(self.token_file)}

    def assume_role_with_oidc(self, p: dict[str, str]) -> dict[str, Any]:
        for name in ("RoleArn", "OIDCProviderArn", "OIDCToken", "RoleSessionName"):
            if not p.get(name):
                raise PopError(400, "MissingParameter",
                               f'The input parameter "{name}" that is mandatory for processing this request is not supplied.')
        duration = p.get("DurationSeconds") or "3600"
        if not duration.isdigit() or not 900 <= int(duration) <= MAX_SESSION_DURATION:
            raise PopError(400, "InvalidParameter.DurationSeconds",
                           f"The parameter DurationSeconds must be between 900 and {MAX_SESSION_DURATION}.")
        if p["OIDCProviderArn"] != self.provider_arn:
            raise PopError(404, "EntityNotExist.OIDCProvider", "The specified OIDC provider does not exist.")
        if p["RoleArn"] != self.role_arn:
            raise PopError(404, "EntityNotExist.Role", "The specified Role not exists.")
        if not hmac.compare_digest(p["OIDCToken"].strip().encode(), self.token.encode()):
            raise PopError(400, "AuthenticationFail.OIDCToken.Invalid", "The specified OIDCToken is invalid.")
        cred = self.gw.credentials.new_sts()
        now = datetime.datetime.now(datetime.UTC)
        session = p["RoleSessionName"]
        role_id = str(int(hashlib.sha1(self.role_arn.encode()).hexdigest()[:15], 16))
        return {
            "OIDCTokenInfo": {"Subject": self.subject, "Issuer": self.issuer, "ClientIds": AUDIENCE,
                              "IssuanceTime": _iso(datetime.datetime.fromtimestamp(self.issued_at, datetime.UTC)),
                              "ExpirationTime": _iso(datetime.datetime.fromtimestamp(self.expires_at, datetime.UTC))},
            "AssumedRoleUser": {"Arn": f"{self.role_arn}/{session}", "AssumedRoleId": f"{role_id}:{session}"},
            "Credentials": {"AccessKeyId": cred.access_key_id, "AccessKeySecret": cred.access_key_secret,
                            "SecurityToken": cred.security_token,
                            "Expiration": _iso(now + datetime.timedelta(seconds=int(duration)))},
        }

    async def handle(self, request: web.Request) -> web.Response:
        rid = request_id()
        params = dict(request.query)
        if request.method == "POST" and request.can_read_body:
            params.update({k: str(v) for k, v in (await request.post()).items()})
        try:
            action = params.get("Action", "")
            if action != "AssumeRoleWithOIDC":
                raise PopError(404, "InvalidAction.NotFound",
                               f"Specified api is not found, please check your url and method. ({action})")
            if params.get("Version") != VERSION:
                raise PopError(400, "InvalidVersion", f"Specified parameter Version is not valid; use {VERSION}.")
            await self.gw.admit(ACTION)
            body = self.assume_role_with_oidc(params)
        except PopError as e:
            if e.code.startswith(("AuthenticationFail", "EntityNotExist")):
                self.gw.rejected[e.code] += 1
            else:
                self.gw.served(ACTION, error=True)
            return e.response(rid)
        self.gw.served(ACTION)
        return web.Response(body=json.dumps({"RequestId": rid, **body}), content_type="application/json")
