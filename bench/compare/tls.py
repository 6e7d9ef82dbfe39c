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

The proxies are the bench's network stand-in, bench/net_proxy.cpp terminating TLS
(bench/stack.py's `Stack.proxy`), each its own process, so their CPU is counted as a server's.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from bench.stack import Proxy, Stack
from tools.fake_bank.pki import Pki

TRUSTSTORE_PASSWORD = "bench-compare"  # a throwaway store of one public CA certificate


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
    proxies: dict[str, Proxy]  # "SQS", "DynamoDB" -> its proxy
    truststore: Path | None  # for the JVM, when Spring runs

    def url(self, service: str) -> str:
        return self.proxies[service].url

    def bank_args(self) -> list[str]:
        """The fake bank's options: HTTPS, and a client certificate of our CA required."""
        return ["--tls-cert", str(self.pki.server_cert), "--tls-key", str(self.pki.server_key), "--tls-client-ca", str(self.pki.ca)]

    def handshakes(self) -> int:
        return sum(p.handshakes() for p in self.proxies.values())

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


def start(st: Stack, java: str | None) -> Tls:
    """A TLS proxy in front of the stack's SQS and DynamoDB, with the stack's test CA, and the
    JVM's trust store when `java` runs a consumer."""
    aws = {"SQS": st.env["AWS_ENDPOINT_URL_SQS"], "DynamoDB": st.env["AWS_ENDPOINT_URL_DYNAMODB"]}
    proxies = {service: st.proxy(f"tls-proxy-{service}", url, tls=True) for service, url in aws.items()}
    return Tls(st.pki(), proxies, java_truststore(java, st.pki()) if java else None)
