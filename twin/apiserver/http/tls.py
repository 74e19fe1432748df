"""The cluster's CA (kubeadm's pki/ca.crt and ca.key), the API server's serving certificate for 127.0.0.1, client
certificates signed by the CA (admin.conf, super-admin.conf), and the API server's TLS context, which asks every
client for an optional certificate as kube-apiserver does."""
from __future__ import annotations

import _ssl
import ctypes
import datetime
import ipaddress
import logging
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

log = logging.getLogger("twin")
_NO_USAGE = dict(content_commitment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
                 decipher_only=False)


def _name(cn: str, orgs: tuple[str, ...] = ()) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
                     + ([x509.NameAttribute(NameOID.COMMON_NAME, cn)] if cn else []))


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(_pem_key(key))
    path.chmod(0o600)


def make_ca(cn: str = "twin-ca", days: int = 30) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A self-signed CA (kubeadm's is CN=kubernetes; a test's foreign CA is another one)."""
    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn))
          .public_key(key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, key_encipherment=False,
                                       **_NO_USAGE), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
          .sign(key, hashes.SHA256()))
    return ca, key


def make_certs(directory: Path) -> tuple[Path, Path, Path]:
    """Write ca.crt, ca.key (kubeadm keeps it beside ca.crt: what signs client certificates), server.crt and
    server.key into directory; return the paths of ca.crt, server.crt and server.key."""
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca, ca_key = make_ca()
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name("kube-apiserver")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.DNSName("kubernetes"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = (directory / "ca.crt", directory / "server.crt", directory / "server.key")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    _write_key(directory / "ca.key", ca_key)
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(paths[2], key)
    return paths


def load_ca(directory: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """The CA make_certs wrote (ca.crt, ca.key)."""
    key = serialization.load_pem_private_key((directory / "ca.key").read_bytes(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return x509.load_pem_x509_certificate((directory / "ca.crt").read_bytes()), key


def client_cert(ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, cn: str, orgs: tuple[str, ...] = (), *,
                not_before: datetime.datetime | None = None, days: float = 365) -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM) of a client certificate as kubeadm's certs phase makes one: subject O=<group>...,
    CN=<user>, extended key usage clientAuth, signed by the CA. not_before/days shape its validity (tests make
    expired and not-yet-valid ones)."""
    start = not_before or datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name(cn, orgs)).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, key_cert_sign=False,
                                         crl_sign=False, **_NO_USAGE), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


# kube-apiserver serves with tls.RequestClientCert: the handshake takes any client certificate, and the x509
# authenticator verifies it per request, so an expired or foreign one is a 401 Unauthorized, not a failed
# handshake. Python's ssl can only verify during the handshake (CERT_OPTIONAL refuses a bad certificate there), so
# the API server's context gets an OpenSSL verify callback that accepts every chain; twin/apiserver/auth/x509.py
# verifies the certificate instead. The callback is set through libssl with the SSL_CTX* of the context.
_VERIFY_CB_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
_ACCEPT_ANY = _VERIFY_CB_TYPE(lambda _preverify_ok, _store: 1)
_SSL_VERIFY_PEER = 1


def _request_client_cert(ctx: ssl.SSLContext) -> bool:
    """Make ctx (CERT_OPTIONAL) ask for a certificate and accept any; False where its SSL_CTX* cannot be found."""
    try:
        lib = ctypes.CDLL(_ssl.__file__)
        lib.SSL_CTX_get_verify_mode.restype = ctypes.c_int
        lib.SSL_CTX_get_verify_mode.argtypes = [ctypes.c_void_p]
        lib.SSL_CTX_set_verify.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        # PySSLContext starts with PyObject_HEAD, then its SSL_CTX *ctx
        ptr = ctypes.c_void_p.from_address(id(ctx) + object.__basicsize__).value
        if not ptr or lib.SSL_CTX_get_verify_mode(ptr) != _SSL_VERIFY_PEER:
            return False
        lib.SSL_CTX_set_verify(ptr, _SSL_VERIFY_PEER, ctypes.cast(_ACCEPT_ANY, ctypes.c_void_p))
        return True
    except (OSError, AttributeError, ValueError):
        return False


def apiserver_context(ca: Path, crt: Path, key: Path) -> ssl.SSLContext:
    """The API server's TLS context: its serving certificate, and an optional client certificate
    (--client-ca-file=ca), verified per request by the x509 authenticator."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(crt, key)
    ctx.load_verify_locations(ca)
    ctx.verify_mode = ssl.CERT_OPTIONAL
    if not _request_client_cert(ctx):
        # still asks for a certificate, but the handshake itself refuses an expired or foreign one
        log.warning("client certificates: OpenSSL's verify callback could not be set; invalid certificates fail the "
                    "TLS handshake instead of answering 401")
    return ctx
