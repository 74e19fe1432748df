"""Who a request is: x509 client certificates, kubeadm's admin tokens and ServiceAccount tokens from TokenRequest.

Authenticators are asked in kube-apiserver's order (pkg/kubeapiserver/authenticator/config.go New, a union.New
without failOnError): the x509 client certificate first, then the bearer token. The first that authenticates
decides; one that fails (an expired or foreign certificate, an invalid token) does not stop the next, and the
request is 401 Unauthorized only when none succeeds and one failed or there were no credentials at all (the
twin runs as --anonymous-auth=false). So a valid certificate wins over any token, and a valid token still
authenticates beside an invalid certificate. Every identity gets system:authenticated (AuthenticatedGroupAdder).

The x509 authenticator (x509.py) verifies against the cluster CA (pki/ca.crt); the twin writes kubeadm 1.29+'s
admin.conf (CN=kubernetes-admin, O=kubeadm:cluster-admins) and super-admin.conf (CN=kubernetes-super-admin,
O=system:masters, the break-glass identity no RBAC change locks out) with such certificates. The admin token
(DIR/kubeconfig) stands for the same identity as admin.conf; a super-admin token is only for in-process tests.
`kubectl create token` (POST serviceaccounts/<sa>/token) issues a JWT whose claims are kube-apiserver's
(iss, sub, aud, exp, iat, nbf, kubernetes.io.namespace/serviceaccount); it is signed with a per-twin HMAC
key instead of the real server's RSA key, which no client verifies anyway. A token is valid while it has not
expired and its ServiceAccount exists with the uid it was issued for (deleted or recreated SA: 401), as the
real token authenticator's lookup does. The legacy token controller (controllers/serviceaccount_tokens.py) has
legacy_token() sign the token of a kubernetes.io/service-account-token Secret: legacy.go's claims, no expiry, valid
while the Secret holds it and its ServiceAccount exists with the uid it names. Its identity carries the SA's uid and the token's credential id.
TokenReview answers for any token with the union authenticator's error wording; SelfSubjectReview (`kubectl
auth whoami`) returns the requester's user info.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any, NamedTuple

from ...apimachinery import errors
from .x509 import InvalidCertificate, X509Authenticator

ISSUER = "https://kubernetes.default.svc.cluster.local"
LEGACY_ISSUER = "kubernetes/serviceaccount"  # legacy.go: tokens of kubernetes.io/service-account-token Secrets
_LEGACY = "kubernetes.io/serviceaccount/"
AUDIENCES = [ISSUER]
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600  # validation.go: "may not specify a duration less than 10 minutes"
MAX_EXPIRATION = 1 << 32
SA_PREFIX = "system:serviceaccount:"


class Identity(NamedTuple):
    user: str
    groups: tuple[str, ...]
    uid: str = ""
    # user.Info's extra, hashable: ((key, (values...)), ...) in the order the authenticator gave them
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


ADMIN = Identity("kubernetes-admin", ("kubeadm:cluster-admins", "system:authenticated"))
SUPER_ADMIN = Identity("kubernetes-super-admin", ("system:masters", "system:authenticated"))


def service_account(namespace: str, name: str, uid: str = "", jti: str = "") -> Identity:
    """serviceaccount.UserInfo: the SA's user name and the groups every SA token carries; a token's identity also
    has the SA's uid and the token's credential id (JTI=<jti>, ServiceAccountTokenJTI, on in 1.32)."""
    extra = (("authentication.kubernetes.io/credential-id", (f"JTI={jti}",)),) if jti else ()
    return Identity(f"{SA_PREFIX}{namespace}:{name}",
                    ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"), uid, extra)


def split_sa_user(user: str) -> tuple[str, str] | None:
    """serviceaccount.SplitUsername: (namespace, name) of a system:serviceaccount:<ns>:<name> user, else None."""
    if not user.startswith(SA_PREFIX):
        return None
    parts = user[len(SA_PREFIX):].split(":")
    if len(parts) != 2 or not all(parts):
        return None
    return parts[0], parts[1]


class InvalidToken(Exception):
    """A token no authenticator accepts; the message is the union authenticator's error."""


def user_info(who: Identity) -> dict:
    """authentication/v1 UserInfo of an identity, empty fields left out as the real server writes them."""
    out: dict[str, Any] = {"username": who.user}
    if who.uid:
        out["uid"] = who.uid
    out["groups"] = list(who.groups)
    if who.extra:
        out["extra"] = {k: list(v) for k, v in who.extra}
    return out


def self_subject_review(who: Identity) -> dict:
    """SelfSubjectReview (`kubectl auth whoami`): the requester's user info, stamped with the time of the answer."""
    return {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            "status": {"userInfo": user_info(who)}}


def _go_list(values: list[str]) -> str:
    """Go's %q of a []string."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Authenticator:
    def __init__(self, store: Any, admin_token: str, super_admin_token: str = "", client_ca: Any = None):
        self.store = store
        self.x509 = X509Authenticator(client_ca) if client_ca is not None else None
        self.admin_token = admin_token
        self.super_admin_token = super_admin_token
        self._key = secrets.token_bytes(32)
        self._sa_rt = store.rt("", "v1", "serviceaccounts")
        self._secret_rt = store.rt("", "v1", "secrets")

    def authenticate(self, header: str, client_cert: bytes | None = None) -> Identity:
        """The identity of the request's client certificate (DER, as the TLS handshake received it) or of its
        `Authorization: Bearer ...` header, in that order; 401 Unauthorized when neither authenticates."""
        failure: Exception | None = None
        if client_cert and self.x509 is not None:
            try:
                found = self.x509.authenticate(client_cert)
            except InvalidCertificate as e:
                failure = e
            else:
                if found is not None:
                    user, groups, extra = found
                    return Identity(user, groups if "system:authenticated" in groups else
                                    (*groups, "system:authenticated"), "", extra)
        if header.startswith("Bearer "):
            try:
                return self._identity(header[7:], AUDIENCES)[0]
            except InvalidToken as e:
                failure = e
        raise errors.unauthorized() from failure

    def _identity(self, token: str, audiences: list[str]) -> tuple[Identity, list[str]]:
        """(identity, the audiences it is valid for) of a token; InvalidToken with the authenticator's error."""
        if token == self.admin_token or (self.super_admin_token and token == self.super_admin_token):
            if AUDIENCES[0] not in audiences:  # audience-agnostic authenticators serve the API audiences only
                raise InvalidToken("invalid bearer token")
            return (ADMIN if token == self.admin_token else SUPER_ADMIN), list(audiences)
        claims = self._verify(token)
        if claims.get("iss") == LEGACY_ISSUER:
            return self._legacy_identity(token, claims, audiences)
        aud = claims.get("aud") or []
        aud = [aud] if isinstance(aud, str) else list(aud)
        wanted = [a for a in aud if a in audiences]
        if not wanted:
            raise InvalidToken(f"[invalid bearer token, token audiences {_go_list(aud)} is invalid for the target "
                               f"audiences {_go_list(audiences)}]")
        k8s = claims.get("kubernetes.io") or {}
        ns, sa = k8s.get("namespace", ""), k8s.get("serviceaccount") or {}
        if not self.store.exists(self._sa_rt, ns, sa.get("name", "")):
            raise InvalidToken("[invalid bearer token, service account token has been invalidated]")
        uid = self.store.get(self._sa_rt, ns, sa["name"])["metadata"]["uid"]
        if uid != sa.get("uid"):
            raise InvalidToken(f"[invalid bearer token, service account UID ({uid}) does not match claim ({sa.get('uid')})]")
        return service_account(ns, sa["name"], uid, str(claims.get("jti") or "")), wanted

    def _legacy_identity(self, token: str, claims: dict, audiences: list[str]) -> tuple[Identity, list[str]]:
        """legacy.go validator: the Secret still holds this token and its ServiceAccount is the one it names; the
        token has no audience, so it serves the API server's (the JWT authenticator's implicit audiences)."""
        wanted = [a for a in AUDIENCES if a in audiences]
        if not wanted:
            raise InvalidToken(f"[invalid bearer token, token audiences {_go_list(AUDIENCES)} is invalid for the "
                               f"target audiences {_go_list(audiences)}]")
        ns, secret = claims.get(_LEGACY + "namespace", ""), claims.get(_LEGACY + "secret.name", "")
        name, uid = claims.get(_LEGACY + "service-account.name", ""), claims.get(_LEGACY + "service-account.uid", "")
        stored = self.store.get(self._secret_rt, ns, secret) if self.store.exists(self._secret_rt, ns, secret) else {}
        held = ((stored.get("data") or {}).get("token") or "")
        if not stored or stored["metadata"].get("deletionTimestamp") or \
                held != base64.b64encode(token.encode()).decode():
            raise InvalidToken("[invalid bearer token, token has been invalidated]")
        if not self.store.exists(self._sa_rt, ns, name) or self.store.get(self._sa_rt, ns, name)["metadata"]["uid"] != uid:
            raise InvalidToken("[invalid bearer token, service account token has been invalidated]")
        return service_account(ns, name, uid), wanted

    def legacy_token(self, namespace: str, name: str, uid: str, secret: str) -> str:
        """The token the legacy token controller writes into Secret namespace/secret for ServiceAccount name."""
        return self._sign({"iss": LEGACY_ISSUER, _LEGACY + "namespace": namespace, _LEGACY + "secret.name": secret,
                           _LEGACY + "service-account.name": name, _LEGACY + "service-account.uid": uid,
                           "sub": f"{SA_PREFIX}{namespace}:{name}"})

    def _sign(self, claims: dict) -> str:
        head = _b64(json.dumps({"alg": "HS256", "kid": "twin"}, separators=(",", ":")).encode())
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        sig = _b64(hmac.new(self._key, f"{head}.{payload}".encode(), hashlib.sha256).digest())
        return f"{head}.{payload}.{sig}"

    def _verify(self, token: str) -> dict:
        parts = token.split(".")
        if len(parts) != 3:
            raise InvalidToken("invalid bearer token")
        want = hmac.new(self._key, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
        try:
            if not hmac.compare_digest(want, _unb64(parts[2])):
                raise InvalidToken("[invalid bearer token, square/go-jose: error in cryptographic primitive]")
            claims = json.loads(_unb64(parts[1]))
        except (ValueError, TypeError) as e:
            raise InvalidToken("invalid bearer token") from e
        if not isinstance(claims, dict):
            raise InvalidToken("invalid bearer token")
        if claims.get("iss") != LEGACY_ISSUER and claims.get("exp", 0) <= time.time():
            raise InvalidToken("[invalid bearer token, service account token has expired]")
        return claims

    def token_review(self, rtype: Any, namespace: str, body: dict) -> dict:
        """TokenReview (tokenreview/rest.go): the spec's token authenticated for its audiences (default: the API
        server's), the answer in status; a token that does not authenticate is a 201 with status.error."""
        if namespace:
            raise errors.bad_request(f"namespace is not allowed on this type: {namespace}")
        spec = body.get("spec") or {}
        token = spec.get("token") or ""
        if not token:
            raise errors.bad_request("token is required for TokenReview in authentication")
        status: dict[str, Any] = {"user": {}}
        try:
            who, audiences = self._identity(token, list(spec.get("audiences") or AUDIENCES))
        except InvalidToken as e:
            status["error"] = str(e)
        else:
            status = {"authenticated": True, "user": user_info(who), "audiences": audiences}
        return {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": None}, "spec": spec, "status": status}

    def token_request(self, tr_rtype: Any, namespace: str, name: str, body: Any) -> dict:
        """POST serviceaccounts/<name>/token: a TokenRequest with status.token and expirationTimestamp."""
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a TokenRequest object")
        spec = dict(body.get("spec") or {})
        seconds = spec.get("expirationSeconds")
        if seconds is None:
            seconds = DEFAULT_EXPIRATION
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            raise errors.bad_request("spec.expirationSeconds must be an integer number of seconds")
        why = ("may not specify a duration less than 10 minutes" if seconds < MIN_EXPIRATION else
               "may not specify a duration larger than 2^32 seconds" if seconds > MAX_EXPIRATION else "")
        if why:
            raise errors.invalid(tr_rtype, "", [{"reason": "FieldValueInvalid", "field": "spec.expirationSeconds",
                                                 "message": f"Invalid value: {seconds}: {why}"}])
        sa = self.store.get(self._sa_rt, namespace, name)  # 404 serviceaccounts "<name>" not found
        now = int(time.time())
        audiences = spec.get("audiences") or AUDIENCES
        claims = {"aud": audiences, "exp": now + seconds, "iat": now, "iss": ISSUER,
                  "jti": secrets.token_hex(16),
                  "kubernetes.io": {"namespace": namespace,
                                    "serviceaccount": {"name": name, "uid": sa["metadata"]["uid"]}},
                  "nbf": now, "sub": f"{SA_PREFIX}{namespace}:{name}"}
        spec.update({"audiences": audiences, "expirationSeconds": seconds})
        spec.setdefault("boundObjectRef", None)
        expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + seconds))
        return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
                "spec": spec, "status": {"token": self._sign(claims), "expirationTimestamp": expires}}
