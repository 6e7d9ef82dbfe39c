"""A throwaway PKI for the mutual-TLS tests: a CA, a server certificate for 127.0.0.1 and
localhost, a client certificate the CA signed, and a rogue client certificate signed by a
second CA that nobody trusts. EC P-256 keys, valid for a day, made with `cryptography`.

    python -m tools.fake_bank.pki DIR     # writes the PEM files below into DIR

Files: ca.pem, server.pem, server-key.pem, client.pem, client-key.pem, rogue-client.pem,
rogue-client-key.pem. Keys are written unencrypted (mode 0600): they exist for one test run.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    rogue_cert: Path
    rogue_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _issue(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool = False,
    server: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    issuer_name, issuer_key = issuer if issuer else (_name(subject), key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
    else:
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _write(path: Path, data: bytes, private: bool = False) -> Path:
    path.write_bytes(data)
    if private:
        os.chmod(path, 0o600)
    return path


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    keys = {name: ec.generate_private_key(ec.SECP256R1()) for name in ("ca", "server", "client", "rogue-ca", "rogue")}
    ca = _issue("fake-bank test CA", keys["ca"], None, ca=True)
    rogue_ca = _issue("untrusted CA", keys["rogue-ca"], None, ca=True)
    server = _issue("fake-bank", keys["server"], (ca.subject, keys["ca"]), server=True)
    client = _issue("charge-recovery", keys["client"], (ca.subject, keys["ca"]))
    rogue = _issue("charge-recovery", keys["rogue"], (rogue_ca.subject, keys["rogue-ca"]))
    pem = serialization.Encoding.PEM
    return Pki(
        ca=_write(directory / "ca.pem", ca.public_bytes(pem)),
        server_cert=_write(directory / "server.pem", server.public_bytes(pem)),
        server_key=_write(directory / "server-key.pem", _key_pem(keys["server"]), private=True),
        client_cert=_write(directory / "client.pem", client.public_bytes(pem)),
        client_key=_write(directory / "client-key.pem", _key_pem(keys["client"]), private=True),
        rogue_cert=_write(directory / "rogue-client.pem", rogue.public_bytes(pem)),
        rogue_key=_write(directory / "rogue-client-key.pem", _key_pem(keys["rogue"]), private=True),
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    make_pki(Path(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
