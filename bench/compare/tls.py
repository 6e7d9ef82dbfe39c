"""`bench/compare/run.py --tls`: every consumer's calls over TLS, as production makes them.

SQS and DynamoDB over HTTPS through one TLS-terminating proxy each in front of the emulators,
the bank over HTTPS with client certificates (mutual TLS: the fake bank's --tls-client-ca),
all with certificates of one throwaway CA (tools/fake_bank/pki.py). Each consumer is given
them the way its own stack documents:

  ours        AWS_CA_BUNDLE, BANK_TLS_CA_FILE, BANK_TLS_CERT_FILE, BANK_TLS_KEY_FILE
              (docs/design.md §6);
  powertools  AWS_CA_BUNDLE, which boto3 reads; the same BANK_TLS_* variables, which the
              reference passes to urllib3's pool (ca_certs, cert_file, key_file);
  spring      the JVM's trust store (-Djavax.net.ssl.trustStore, a PKCS12 made with the JDK's
              keytool), which the AWS SDK's HTTP clients use; the bank's client certificate
              and CA as a Spring Boot SSL bundle named `bank` (SPRING_SSL_BUNDLE_PEM_BANK_*),
              which the reference gives its Apache HttpClient.

The queue URLs are rewritten to the SQS proxy's origin, as AWS's own are https. The harness
itself (provision, send, queue depth) keeps the emulators' plain ports: it is not measured.

    python -m bench.compare.tls proxy TARGET_PORT CERT KEY    # one proxy, as its own process

`start_proxy` is the one place that chooses the proxy: today tools/local_stack/tls_proxy.py
(Python asyncio and OpenSSL) run as its own process, so its CPU is counted as a server's and
not the harness's. It prints {"event":"listening","port":N} once it accepts, then
{"event":"handshakes","handshakes":N,"refused":M} whenever a count changes.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from tools.common import announce_listening
from tools.fake_bank.pki import Pki, make_pki
from tools.local_stack.paths import PYTHON
from tools.local_stack.processes import ManagedProcess, ProcessManager, json_event
from tools.local_stack.tls_proxy import TlsProxy

TRUSTSTORE_PASSWORD = "bench-compare"  # a throwaway store of one public CA certificate


def start_proxy(manager: ProcessManager, name: str, target_url: str, pki: Pki) -> ManagedProcess:
    """An HTTPS front for the plain-HTTP server at `target_url`, with the CA's server
    certificate; ready_info["port"] is its port."""
    target_port = urlsplit(target_url).port
    argv = [PYTHON, "-m", "bench.compare.tls", "proxy", str(target_port), str(pki.server_cert), str(pki.server_key)]
    return manager.start(name, argv, ready=json_event("listening"))


def handshakes(proxy: ManagedProcess) -> int:
    """Completed handshakes so far (the proxy's last count)."""
    counts = [line for line in proxy.json_lines() if line.get("event") == "handshakes"]
    return counts[-1]["handshakes"] if counts else 0


def java_truststore(java: str, pki: Pki) -> Path:
    """A PKCS12 trust store holding the CA, made with the keytool beside `java`."""
    keytool = Path(shutil.which(java) or java).resolve().parent / "keytool"
    store = pki.ca.with_name("truststore.p12")
    store.unlink(missing_ok=True)
    subprocess.run([str(keytool), "-importcert", "-noprompt", "-alias", "bench-ca", "-file", str(pki.ca), "-keystore", str(store),
                    "-storetype", "PKCS12", "-storepass", TRUSTSTORE_PASSWORD], check=True, capture_output=True)
    return store


@dataclass
class Tls:
    pki: Pki
    proxies: dict[str, ManagedProcess]  # "SQS", "DynamoDB" -> its proxy
    truststore: Path | None  # for the JVM, when Spring runs

    def url(self, service: str) -> str:
        return f"https://127.0.0.1:{self.proxies[service].ready_info['port']}"

    def bank_args(self) -> list[str]:
        """The fake bank's options: HTTPS, and a client certificate of our CA required."""
        return ["--tls-cert", str(self.pki.server_cert), "--tls-key", str(self.pki.server_key), "--tls-client-ca", str(self.pki.ca)]

    def handshakes(self) -> int:
        return sum(handshakes(p) for p in self.proxies.values())

    def consumer_env(self, kind: str, env: dict[str, str]) -> dict[str, str]:
        """`env` (a consumer's queue, table and plain endpoints) with every AWS call over TLS
        and, for `kind`, the settings that make its clients trust our CA and present the client
        certificate to the bank."""
        sqs = self.url("SQS")
        out = {**env, "AWS_ENDPOINT_URL_SQS": sqs, "AWS_ENDPOINT_URL_DYNAMODB": self.url("DynamoDB")}
        for name in ("CHARGE_QUEUE_URL", "CHARGE_DLQ_URL"):
            if out.get(name):
                out[name] = sqs + urlsplit(out[name]).path
        if kind == "spring":
            out |= {"SPRING_SSL_BUNDLE_PEM_BANK_KEYSTORE_CERTIFICATE": f"file:{self.pki.client_cert}",
                    "SPRING_SSL_BUNDLE_PEM_BANK_KEYSTORE_PRIVATE_KEY": f"file:{self.pki.client_key}",
                    "SPRING_SSL_BUNDLE_PEM_BANK_TRUSTSTORE_CERTIFICATE": f"file:{self.pki.ca}"}
        else:
            out |= {"AWS_CA_BUNDLE": str(self.pki.ca), "BANK_TLS_CA_FILE": str(self.pki.ca),
                    "BANK_TLS_CERT_FILE": str(self.pki.client_cert), "BANK_TLS_KEY_FILE": str(self.pki.client_key)}
        return out

    def jvm_options(self) -> list[str]:
        assert self.truststore is not None
        return [f"-Djavax.net.ssl.trustStore={self.truststore}", "-Djavax.net.ssl.trustStoreType=PKCS12",
                f"-Djavax.net.ssl.trustStorePassword={TRUSTSTORE_PASSWORD}"]


def start(manager: ProcessManager, directory: Path, aws_endpoints: dict[str, str], java: str | None) -> Tls:
    """The CA and certificates in `directory`, a proxy per AWS service ({"SQS": plain URL,
    ...}), and the JVM's trust store when `java` runs a consumer."""
    pki = make_pki(directory)
    proxies = {service: start_proxy(manager, f"tls-proxy-{service}", url, pki) for service, url in aws_endpoints.items()}
    return Tls(pki, proxies, java_truststore(java, pki) if java else None)


def _serve(target_port: int, cert: str, key: str) -> int:
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    proxy = TlsProxy("127.0.0.1", target_port, Path(cert), Path(key))
    announce_listening(proxy.port, None, url=proxy.url)
    last = (0, 0)
    while not stopping.wait(0.2):
        now = (proxy.handshakes, proxy.refused)
        if now != last:
            print(json.dumps({"event": "handshakes", "handshakes": now[0], "refused": now[1]}), flush=True)
            last = now
    proxy.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "proxy":
        raise SystemExit(__doc__)
    sys.exit(_serve(int(sys.argv[2]), sys.argv[3], sys.argv[4]))
