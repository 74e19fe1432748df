"""Server side of Alibaba Cloud's request signatures, ROA and RPC, as the POP gateway checks them.

Two signature versions arrive:
- 1.0 (HMAC-SHA1): aliyun-python-sdk-core and the collection. RPC signs the sorted query
  (`Signature`, `SignatureNonce`, `Timestamp`); ROA signs method, Accept, Content-MD5, Content-Type, Date, the
  x-acs-* headers and the resource (`Authorization: acs <AK>:<sig>`), with no nonce of its own.
- V3 (ACS3-HMAC-SHA256): the `alibabacloud_*` Tea SDKs and the aliyun CLI, for ROA and RPC alike.
  `Authorization: ACS3-HMAC-SHA256 Credential=<AK>,SignedHeaders=<a;b>,Signature=<hex>`; the canonical request
  is method, URI, sorted encoded query, the signed headers as `name:value` lines, the signed header names, and
  the hex SHA-256 of the body (also sent as x-acs-content-sha256), one per line; the signature is the hex
  HMAC-SHA256 over "ACS3-HMAC-SHA256\n" + hex SHA-256 of the canonical request (alibabacloud_tea_openapi
  `Utils.get_authorization`; Alibaba Cloud's "V3 request structure and signature").

Each check rebuilds what was signed from what arrived on the wire (never from what the SDK meant to send), so
a client that signs a different query, header set or path than it sends is rejected as the gateway rejects it.
Refusals are PopErrors with the gateway's codes and HTTP statuses:
- unknown AccessKeyId: 404 InvalidAccessKeyId.NotFound
- wrong signature: 400 SignatureDoesNotMatch "... server string to sign is:<sts>" (for typed V1 requests the SDK
  compares that tail with its own string to sign and, when equal, reports InvalidAccessKeySecret)
- a malformed or partial signature: 400 IncompleteSignature; an ROA request without any: 400 MissingAuthorization
- no timestamp: 400 MissingTimestamp (RPC), MissingDate (ROA 1.0; the gateway's "<Name> is mandatory for this
  action." family), IncompleteSignature (V3 without x-acs-date, which must be signed)
- a timestamp that does not parse: 400 InvalidTimeStamp.Format; one more than 15 minutes from the gateway's
  clock, either way: 400 InvalidTimeStamp.Expired "Specified time stamp or date value is expired."
- a nonce seen within the window: 400 SignatureNonceUsed "Specified signature nonce was used already."
  (RPC SignatureNonce and V3 x-acs-signature-nonce are required; an ROA 1.0 x-acs-signature-nonce is checked
  when sent). A nonce older than the window cannot be replayed anyway: its timestamp is refused first.
"""
from __future__ import annotations

import base64
import calendar
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from email.utils import parsedate_tz
from typing import Any
from collections.abc import Mapping
from urllib.parse import quote

from aiohttp import web

from .errors import PopError

CLOCK_SKEW_SECONDS = 15 * 60  # the gateway's window for Timestamp / Date / x-acs-date, both ways
NONCE_MEMORY = 200_000  # an upper bound on remembered nonces, whatever their age
V3_ALGORITHM = "ACS3-HMAC-SHA256"
ISO_8601 = "%Y-%m-%dT%H:%M:%SZ"


@dataclass
class Credential:
    access_key_id: str
    access_key_secret: str
    security_token: str | None = None  # STS credentials carry one; the gateway checks it with the key


class Credentials:
    """The access keys the twin's cloud accepts, and the nonces it has seen within the clock window."""

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
        """Remember a nonce for the clock window; a second use within it is a replay."""
        now = time.time()
        while self._nonces and (len(self._nonces) > NONCE_MEMORY
                                or next(iter(self._nonces.values())) < now - 2 * CLOCK_SKEW_SECONDS):
            self._nonces.popitem(last=False)
        if nonce in self._nonces:
            raise PopError(400, "SignatureNonceUsed", "Specified signature nonce was used already.")
        self._nonces[nonce] = now


def hmac_sha1(key: str, text: str) -> str:
    return base64.b64encode(hmac.new(key.encode(), text.encode(), hashlib.sha1).digest()).decode()


def _mismatch(string_to_sign: str) -> PopError:
    return PopError(400, "SignatureDoesNotMatch",
                    "Specified signature is not matched with our calculation. server string to sign is:" + string_to_sign)


def _bad_format(value: str) -> PopError:
    return PopError(400, "InvalidTimeStamp.Format",
                    f"Specified time stamp or date value is not well formatted: {value!r}.")


def check_clock(epoch: float, now: float | None = None) -> None:
    if abs((time.time() if now is None else now) - epoch) > CLOCK_SKEW_SECONDS:
        raise PopError(400, "InvalidTimeStamp.Expired", "Specified time stamp or date value is expired.")


def parse_iso8601(value: str) -> float:
    """RPC Timestamp and V3 x-acs-date: `YYYY-MM-DDThh:mm:ssZ`, UTC."""
    try:
        return float(calendar.timegm(time.strptime(value, ISO_8601)))
    except ValueError:
        raise _bad_format(value) from None


def parse_http_date(value: str) -> float:
    """ROA Date: RFC 2616 (`Thu, 03 Dec 2026 17:40:00 GMT`)."""
    parts = parsedate_tz(value)
    if parts is None:
        raise _bad_format(value)
    return float(calendar.timegm(parts[:9]) - (parts[9] or 0))


# V3 (ACS3-HMAC-SHA256), ROA and RPC ------------------------------------------------------------------
def is_v3(headers: Mapping[str, str]) -> bool:
    return headers.get("Authorization", "").startswith("ACS3-")


def _v3_fields(auth: str) -> dict[str, str]:
    algorithm, _, rest = auth.partition(" ")
    if algorithm != V3_ALGORITHM:
        raise PopError(400, "InvalidSignatureMethod",
                       f"Specified signature method {algorithm} is not supported; use {V3_ALGORITHM}.")
    fields = {}
    for part in rest.split(","):
        k, sep, v = part.strip().partition("=")
        if sep:
            fields[k] = v
    missing = [k for k in ("Credential", "SignedHeaders", "Signature") if not fields.get(k)]
    if missing:
        raise PopError(400, "IncompleteSignature",
                       "The request signature does not conform to Aliyun standards. Missing in Authorization: "
                       + ", ".join(missing))
    return fields


def v3_canonical_request(method: str, path: str, query: Any, headers: Any, signed: list[str], payload_hash: str) -> str:
    canonical_query = "&".join(f"{percent_encode(k)}={percent_encode(v)}" for k, v in sorted(query.items()))
    header_lines = "".join(
        f"{name}:{','.join(sorted(v.strip() for v in headers.getall(name, [])))}\n" for name in signed)
    return "\n".join([method, quote(path, safe="/~") or "/", canonical_query, header_lines, ";".join(signed),
                      payload_hash])


def verify_v3(request: web.Request, body: bytes, creds: Credentials) -> Credential:
    """Check an ACS3-HMAC-SHA256 request: header set, payload hash, clock, key, signature, then the nonce."""
    h = request.headers
    fields = _v3_fields(h["Authorization"])
    signed = fields["SignedHeaders"].split(";")
    if signed != sorted(set(signed)) or any(n != n.lower() for n in signed):
        raise PopError(400, "IncompleteSignature",
                       "The request signature does not conform to Aliyun standards: SignedHeaders must be the "
                       "lower-case header names, sorted, each once.")
    must = {"host", "x-acs-date", "x-acs-signature-nonce", "x-acs-content-sha256"}
    must |= {k.lower() for k in h if k.lower().startswith("x-acs-")}
    unsigned = sorted(must - set(signed))
    absent = sorted(n for n in signed if n not in h)
    if unsigned or absent:
        raise PopError(400, "IncompleteSignature",
                       "The request signature does not conform to Aliyun standards: "
                       + (f"headers not signed: {', '.join(unsigned)}" if unsigned else "")
                       + ("; " if unsigned and absent else "")
                       + (f"signed headers not sent: {', '.join(absent)}" if absent else ""))
    for name in ("x-acs-action", "x-acs-version"):
        if not h.get(name):
            raise PopError(400, "MissingParameter",
                           f'The input parameter "{name}" that is mandatory for processing this request is not supplied.')
    check_clock(parse_iso8601(h["x-acs-date"]))
    payload_hash = hashlib.sha256(body).hexdigest()
    if h["x-acs-content-sha256"] != payload_hash:
        raise PopError(400, "SignatureDoesNotMatch",
                       "Specified signature is not matched with our calculation: x-acs-content-sha256 is not the "
                       "hex SHA-256 of the request body.")
    cred = creds.lookup(fields["Credential"], h.get("x-acs-security-token"))
    canonical = v3_canonical_request(request.method, request.path, request.query, h, signed, payload_hash)
    sts = f"{V3_ALGORITHM}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    expected = hmac.new(cred.access_key_secret.encode(), sts.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, fields["Signature"].lower()):
        raise _mismatch(sts)
    creds.use_nonce(h["x-acs-signature-nonce"])
    return cred


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
    if is_v3(request.headers):
        return verify_v3(request, body, creds)
    auth = request.headers.get("Authorization", "")
    if not auth.startswith("acs ") or ":" not in auth:
        raise PopError(400, "MissingAuthorization" if not auth else "IncompleteSignature",
                       "Authorization header is missing." if not auth else
                       "The request signature does not conform to Aliyun standards: Authorization must be "
                       f"'acs <AccessKeyId>:<Signature>' or '{V3_ALGORITHM} Credential=...'.")
    if not request.headers.get("Date"):
        raise PopError(400, "MissingDate", "Date is mandatory for this action.")
    check_clock(parse_http_date(request.headers["Date"]))
    access_key_id, _, signature = auth[4:].partition(":")
    cred = creds.lookup(access_key_id.strip(), request.headers.get("x-acs-security-token"))
    if body and request.headers.get("Content-MD5"):
        md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
        if md5 != request.headers["Content-MD5"]:
            raise PopError(400, "InvalidContentMD5", "Specified Content-MD5 does not match the request body.")
    sts = roa_string_to_sign(request)
    if not hmac.compare_digest(hmac_sha1(cred.access_key_secret, sts), signature.strip()):
        raise _mismatch(sts)
    if request.headers.get("x-acs-signature-nonce"):
        creds.use_nonce(request.headers["x-acs-signature-nonce"])
    return cred


# RPC (ECS) ------------------------------------------------------------------------------------
def percent_encode(text: str) -> str:
    """RFC 3986: everything but A-Z a-z 0-9 - _ . ~ is %XX-encoded (space as %20, * as %2A)."""
    return quote(text, safe="-_.~")


def rpc_string_to_sign(method: str, params: dict[str, str]) -> str:
    canonical = "&".join(f"{percent_encode(k)}={percent_encode(v)}"
                         for k, v in sorted(params.items()) if k != "Signature")
    return f"{method}&%2F&{percent_encode(canonical)}"


def verify_rpc(method: str, params: dict[str, str], creds: Credentials) -> Credential:
    """Signature 1.0 over the query (and form body) parameters."""
    if not params.get("Signature") or not params.get("SignatureMethod") or not params.get("SignatureVersion"):
        missing = [k for k in ("Signature", "SignatureMethod", "SignatureVersion") if not params.get(k)]
        raise PopError(400, "IncompleteSignature",
                       "The request signature does not conform to Aliyun standards. Missing: " + ", ".join(missing))
    if params["SignatureMethod"] != "HMAC-SHA1" or params["SignatureVersion"] != "1.0":
        raise PopError(400, "IncompleteSignature",
                       "The request signature does not conform to Aliyun standards: SignatureMethod HMAC-SHA1 "
                       "and SignatureVersion 1.0 are supported.")
    for name in ("Timestamp", "SignatureNonce"):
        if not params.get(name):
            raise PopError(400, "Missing" + name, f"{name} is mandatory for this action.")
    check_clock(parse_iso8601(params["Timestamp"]))
    cred = creds.lookup(params.get("AccessKeyId"), params.get("SecurityToken"))
    sts = rpc_string_to_sign(method, params)
    if not hmac.compare_digest(hmac_sha1(cred.access_key_secret + "&", sts), params["Signature"]):
        raise _mismatch(sts)
    creds.use_nonce(params["SignatureNonce"])
    return cred


async def rpc_params(request: web.Request) -> tuple[dict[str, str], bytes]:
    """An RPC request's parameters (query, then a form body) and its raw body; V3 names the action and version in
    headers, so they are filled in from x-acs-action / x-acs-version when the query does not carry them."""
    body = await request.read()
    params = dict(request.query)
    if request.method == "POST" and body:
        params.update({k: str(v) for k, v in (await request.post()).items()})
    if is_v3(request.headers):
        params.setdefault("Action", request.headers.get("x-acs-action", ""))
        params.setdefault("Version", request.headers.get("x-acs-version", ""))
    return params, body


def verify_rpc_request(request: web.Request, params: dict[str, str], body: bytes, creds: Credentials) -> Credential:
    if is_v3(request.headers):
        return verify_v3(request, body, creds)
    return verify_rpc(request.method, params, creds)
