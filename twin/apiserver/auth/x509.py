"""The x509 client-certificate authenticator (apiserver/pkg/authentication/request/x509/x509.go with
CommonNameUserConversion), kube-apiserver's --client-ca-file.

The TLS handshake takes any client certificate (twin/apiserver/http/tls.py); here the leaf is verified as Go's
Certificate.Verify does with the client CA as the only root and ExtKeyUsageClientAuth: inside its validity period
(the wall clock, as the real server's), issued and signed by the CA, and an extended key usage, if it has one,
that allows client authentication. A valid certificate is user = subject CN, groups = subject O values in their
order, extra authentication.kubernetes.io/credential-id = X509SHA256=<sha256 of the DER>; one with an empty CN
authenticates nobody (the next authenticator is asked). An invalid one is an error, which the union authenticator
(authentication.Authenticator.authenticate) turns into 401 unless a later authenticator succeeds.
What the twin does not model: intermediates sent by the client (Python's ssl before 3.13 shows only the leaf),
so the client certificate must be issued by the CA itself, as kubeadm's and kind's are.
"""
from __future__ import annotations

import datetime
import hashlib

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
_CLIENT_USAGES = {ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE}


class InvalidCertificate(Exception):
    """A client certificate the CA does not vouch for now; the message is the authenticator's error."""


def _go_time(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _identifier(cert: x509.Certificate) -> str:
    """certificateIdentifier: SN=<serial>, SKID=<hex:pairs>, AKID=<hex:pairs> (what the server logs)."""
    def ext_hex(cls: type, attr: str) -> str:
        try:
            value = getattr(cert.extensions.get_extension_for_class(cls).value, attr) or b""
        except x509.ExtensionNotFound:
            return ""
        return ":".join(f"{b:02X}" for b in value)
    return (f"SN={cert.serial_number}, SKID={ext_hex(x509.SubjectKeyIdentifier, 'digest')}, "
            f"AKID={ext_hex(x509.AuthorityKeyIdentifier, 'key_identifier')}")


class X509Authenticator:
    def __init__(self, client_ca: x509.Certificate):
        self.ca = client_ca

    def authenticate(self, der: bytes) -> tuple[str, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]] | None:
        """(user, groups, extra) of a verified certificate; None when its CN is empty; InvalidCertificate."""
        try:
            cert = x509.load_der_x509_certificate(der)
        except ValueError as e:
            raise InvalidCertificate(f"x509: malformed certificate: {e}") from e
        problem = self._verify(cert)
        if problem:
            raise InvalidCertificate(f"verifying certificate {_identifier(cert)} failed: {problem}")
        cns = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        cn = str(cns[0].value) if cns else ""
        if not cn:
            return None
        groups = tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
        return cn, groups, ((CREDENTIAL_ID, (f"X509SHA256={hashlib.sha256(der).hexdigest()}",)),)

    def _verify(self, cert: x509.Certificate) -> str:
        """Go's x509 error for the certificate against the client CA, or '' when it verifies."""
        now = datetime.datetime.now(datetime.UTC)
        for c in (cert, self.ca):
            if now < c.not_valid_before_utc:
                return (f"x509: certificate has expired or is not yet valid: current time {_go_time(now)} is before "
                        f"{_go_time(c.not_valid_before_utc)}")
            if now > c.not_valid_after_utc:
                return (f"x509: certificate has expired or is not yet valid: current time {_go_time(now)} is after "
                        f"{_go_time(c.not_valid_after_utc)}")
        try:
            cert.verify_directly_issued_by(self.ca)
        except (ValueError, TypeError, InvalidSignature):
            return 'x509: certificate signed by unknown authority'
        try:
            usages = set(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)
        except x509.ExtensionNotFound:
            return ""
        return "" if usages & _CLIENT_USAGES else "x509: certificate specifies an incompatible key usage"
