"""Server side of Alibaba Cloud's signature version 1.0 (HMAC-SHA1), ROA and RPC, as the POP gateway checks it.

Each check rebuilds the string to sign from what arrived on the wire (never from what the SDK meant to
send), so a client that signs a different query, header set or path than it sends is rejected, as the
real gateway rejects it. Failures raise PopError with the gateway's codes, HTTP statuses and messages:
- unknown AccessKeyId: 404 InvalidAccessKeyId.NotFound "Specified access key is not found."
- wrong signature: 400 SignatureDoesNotMatch "Specified signature is not matched with our calculation.
  server string to sign is:<sts>" (for typed requests the SDK compares that tail with its own string to sign
  and, when equal, reports InvalidAccessKeySecret: the secret is wrong, not the signing code)
- missing signature parts: 400 IncompleteSignature (RPC) / 400 MissingAuthorization-like (ROA)
- a reused RPC SignatureNonce: 400 SignatureNonceUsed
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from urllib.parse import quote

from aiohttp import web

from .errors import PopError

NONCE_MEMORY = 100_000  # how many RPC nonces are remembered for replay detection


@dataclass
class Credential:
    access_key_id: str
    access_key_secret: str
    security_token: str | None = None  # STS credentials carry one; the gateway checks it with the key


class Credentials:
    """The access keys the twin's cloud accepts."""

    def __init__(self) -> None:
        self.keys: dict[str, Credential] = {}
        self._nonces: OrderedDict[str, float] = OrderedDict()

    def add(self, cred: Credential) -> Credential:
        self.keys[cred.access_key_id] = cred
        return cred

    def new_access_key(self) -> Credential:
        return self.add(Credential("LTAI" + secrets.token_hex(10), secrets.token_urlsafe(22)))

    def new_sts(self) -> Credential:
        return self.add(Credential("STS." + secrets.token_hex(12), secrets.token_urlsafe(22),
                                   "CAIS" + secrets.token_urlsafe(48)))

    def lookup(self, access_key_id: str | None, security_token: str | None) -> Credential:
        if not access_key_id:
            raise PopError(400, "MissingAccessKeyId", "AccessKeyId is mandatory for this action.")
        cred = self.keys.get(access_key_id)
        if cred is None:
            raise PopError(404, "InvalidAccessKeyId.NotFound", "Specified access key is not found.")
        if cred.security_token and security_token != cred.security_token:
            raise PopError(400, "InvalidSecurityToken.Mismatch" if security_token else "MissingSecurityToken",
                           "Specified SecurityToken is invalid." if security_token
                           else "SecurityToken is mandatory for an STS access key.")
        return cred

    def use_nonce(self, nonce: str) -> None:
        if nonce in self._nonces:
            raise PopError(400, "SignatureNonceUsed", "Specified signature nonce was used already.")
        self._nonces[nonce] = time.monotonic()
        while len(self._nonces) > NONCE_MEMORY:
            self._nonces.popitem(last=False)


def hmac_sha1(key: str, text: str) -> str:
    return base64.b64encode(hmac.new(key.encode(), text.encode(), hashlib.sha1).digest()).decode()


def _mismatch(string_to_sign: str) -> PopError:
    return PopError(400, "SignatureDoesNotMatch",
                    "Specified signature is not matched with our calculation. server string to sign is:" + string_to_sign)


# ROA (CS) ------------------------------------------------------------------------------------
def roa_string_to_sign(request: web.Request) -> str:
    """METHOD, Accept, Content-MD5, Content-Type, Date on their own lines, the x-acs-* headers lower-cased and
    sorted as k:v lines, then the path and the sorted, decoded query k=v pairs."""
    h = request.headers
    lines = [request.method, h.get("Accept", ""), h.get("Content-MD5", ""), h.get("Content-Type", ""),
             h.get("Date", "")]
    acs = sorted((k.lower(), v) for k, v in h.items() if k.lower().startswith("x-acs-"))
    text = "\n".join(lines) + "\n" + "".join(f"{k}:{v}\n" for k, v in acs)
    query = sorted(request.query.items())
    resource = request.path
    if query:
        resource += "?" + "&".join(f"{k}={v}" for k, v in query)
    return text + resource


def verify_roa(request: web.Request, body: bytes, creds: Credentials) -> Credential:
    auth = request.headers.get("Authorization", "")
    if not auth.startswith("acs ") or ":" not in auth:
        raise PopError(400, "MissingAuthorization" if not auth else "InvalidAuthorization",
                       "Authorization header is missing or is not 'acs <AccessKeyId>:<Signature>'.")
    access_key_id, _, signature = auth[4:].partition(":")
    cred = creds.lookup(access_key_id.strip(), request.headers.get("x-acs-security-token"))
    if body and request.headers.get("Content-MD5"):
        md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
        if md5 != request.headers["Content-MD5"]:
            raise PopError(400, "InvalidContentMD5", "Specified Content-MD5 does not match the request body.")
    sts = roa_string_to_sign(request)
    if not hmac.compare_digest(hmac_sha1(cred.access_key_secret, sts), signature.strip()):
        raise _mismatch(sts)
    return cred


# RPC (ECS) ------------------------------------------------------------------------------------
def percent_encode(text: str) -> str:
    """RFC 3986: everything but A-Z a-z 0-9 - _ . ~ is %XX-encoded (space as %20, * as %2A)."""
    return quote(text, safe="-_.~")


def rpc_string_to_sign(method: str, params: dict[str, str]) -> str:
    canonical = "&".join(f"{percent_encode(k)}={percent_encode(v)}"
                         for k, v in sorted(params.items()) if k != "Signature")
    return f"{method}&%2F&{percent_encode(canonical)}"


REQUIRED_RPC = ("AccessKeyId", "Signature", "SignatureMethod", "SignatureVersion", "SignatureNonce", "Timestamp")


def verify_rpc(method: str, params: dict[str, str], creds: Credentials) -> Credential:
    missing = [k for k in REQUIRED_RPC if not params.get(k)]
    if missing:
        raise PopError(400, "IncompleteSignature",
                       "The request signature does not conform to Aliyun standards. Missing: " + ", ".join(missing))
    if params["SignatureMethod"] != "HMAC-SHA1" or params["SignatureVersion"] != "1.0":
        raise PopError(400, "IncompleteSignature",
                       "The request signature does not conform to Aliyun standards: SignatureMethod HMAC-SHA1 "
                       "and SignatureVersion 1.0 are supported.")
    cred = creds.lookup(params["AccessKeyId"], params.get("SecurityToken"))
    sts = rpc_string_to_sign(method, params)
    if not hmac.compare_digest(hmac_sha1(cred.access_key_secret + "&", sts), params["Signature"]):
        raise _mismatch(sts)
    creds.use_nonce(params["SignatureNonce"])
    return cred
