"""The container image's runtime needs, proven without a container engine.

deploy/Containerfile's runtime stage is an empty image plus the file set that
deploy/container/runtime-rootfs.sh lays out. These tests run the same script on the built
binary and then the binary in a chroot of exactly that file set: if a library, the loader or
the CA bundle were missing (or in a place the loader or libcurl does not look), it would fail
here as it would in the image.
"""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import json
import os
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tools.local_stack import REPO_ROOT, binary

SCRIPT = REPO_ROOT / "deploy" / "container" / "runtime-rootfs.sh"
IMAGE_BINARY = "/usr/local/bin/charge-recovery"


def curl_ca_bundle() -> str:
    return subprocess.run(["curl-config", "--ca"], capture_output=True, text=True, check=True).stdout.strip()


def ldd_files(path: Path) -> list[str]:
    """The files `ldd` says the binary loads: resolved libraries and the loader."""
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=True).stdout
    files = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and parts[2].startswith("/"):
            files.append(parts[2])
        elif parts and parts[0].startswith("/"):
            files.append(parts[0])
    return files


@pytest.fixture(scope="module")
def rootfs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rootfs")
    done = subprocess.run([str(SCRIPT), str(binary()), str(root)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return root


def in_chroot(root: Path, args: list[str], env: dict[str, str], timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run the image's binary inside `root` with exactly `env` (an image has no other)."""
    # Root can chroot; anyone else needs a user namespace in which they are root. Found here:
    # `env` (the image's environment) has no PATH.
    chroot = shutil.which("chroot") or "/usr/sbin/chroot"
    prefix = [chroot] if os.geteuid() == 0 else [shutil.which("unshare") or "unshare", "--map-root-user", chroot]
    return subprocess.run(
        [*prefix, str(root), IMAGE_BINARY, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_rootfs_is_the_binary_its_libraries_and_the_ca_bundle_only(rootfs: Path) -> None:
    needed = ldd_files(binary())
    assert any("libcurl" in f for f in needed) and any("ld-linux" in f for f in needed), needed
    present = sorted("/" + str(p.relative_to(rootfs)) for p in rootfs.rglob("*") if p.is_file())
    assert present == sorted({IMAGE_BINARY, curl_ca_bundle(), *needed})
    for f in needed:  # real files with the content of what the host loads, not symlinks
        assert not (rootfs / f.lstrip("/")).is_symlink()
        assert (rootfs / f.lstrip("/")).read_bytes() == Path(f).read_bytes(), f


def test_script_refuses_what_it_cannot_lay_out(tmp_path: Path) -> None:
    text = tmp_path / "not-a-binary"
    text.write_text("#!/bin/sh\n")
    text.chmod(0o755)
    done = subprocess.run([str(SCRIPT), str(text), str(tmp_path / "out")], capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "runtime-rootfs" in done.stderr


def test_binary_starts_in_the_image_file_set(rootfs: Path) -> None:
    helped = in_chroot(rootfs, ["--help"], env={})
    assert helped.returncode == 0, helped.stderr
    for subcommand in ("run", "provision", "send", "status", "redrive"):
        assert subcommand in helped.stdout
    # `run` gets as far as reading its settings: the process, libc and the settings code work.
    unconfigured = in_chroot(rootfs, ["run"], env={})
    assert unconfigured.returncode == 2
    assert unconfigured.stderr.startswith("configuration error: "), unconfigured.stderr


# --- the CA bundle is the one libcurl reads inside the image ---------------------------------


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_ca_and_server_cert(directory: Path) -> tuple[bytes, Path, Path]:
    """A throw-away CA and a server certificate for 127.0.0.1 signed by it."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("runtime-image test CA"))
        .issuer_name(_name("runtime-image test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    cert_file, key_file = directory / "server.pem", directory / "server.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return ca.public_bytes(serialization.Encoding.PEM), cert_file, key_file


class EmptyGetItem(http.server.BaseHTTPRequestHandler):
    """Answers every DynamoDB call with `{}`: for GetItem, "no such item"."""

    targets: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        EmptyGetItem.targets.append(self.headers.get("X-Amz-Target", ""))
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def tls_dynamodb(tmp_path: Path) -> Iterator[tuple[str, bytes]]:
    ca_pem, cert_file, key_file = make_ca_and_server_cert(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), EmptyGetItem)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    EmptyGetItem.targets = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", ca_pem
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_tls_trusts_exactly_the_image_ca_bundle(rootfs: Path, tmp_path: Path, tls_dynamodb: tuple[str, bytes]) -> None:
    url, ca_pem = tls_dynamodb
    env = {
        "AWS_REGION": "ap-south-1",
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "example-secret",
        "AWS_ENDPOINT_URL_DYNAMODB": url,
        "IDEMPOTENCY_TABLE": "charge-idempotency",
    }
    # A private copy: the module's rootfs stays exactly what the image holds.
    root = tmp_path / "root"
    shutil.copytree(rootfs, root, symlinks=True)

    untrusted = in_chroot(root, ["status", "CHG-1"], env)
    assert untrusted.returncode == 1, untrusted.stderr
    assert "certificate" in untrusted.stderr.lower(), untrusted.stderr
    assert EmptyGetItem.targets == []  # no request was sent over the unverified connection

    bundle = root / curl_ca_bundle().lstrip("/")
    bundle.chmod(0o644)
    bundle.write_bytes(bundle.read_bytes() + b"\n" + ca_pem)
    trusted = in_chroot(root, ["status", "CHG-1"], env)
    assert trusted.returncode == 3, trusted.stderr  # reached the table: "no such record"
    assert EmptyGetItem.targets == ["DynamoDB_20120810.GetItem"]
