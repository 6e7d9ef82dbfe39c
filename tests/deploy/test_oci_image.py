"""The built OCI image (`make image`, scripts/build-image.sh) unpacked and run against the local
stack, as the demo runs the binary: umoci unpacks the archive into an OCI runtime bundle, and
the bundle's own process (args, env, user from the image config) runs chrooted into its rootfs,
as uid 65532, with exactly the image's environment plus the stack's addresses.

Skipped when no image was built (IC_IMAGE_DIR, default build/image); CI's image stage builds it
first (`make image-test`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tools.local_stack import REPO_ROOT, ChargeStack, FakeBank, ProcessManager, wait_until
from tools.local_stack.charge_recovery import Consumer

IMAGE_DIR = Path(os.environ.get("IC_IMAGE_DIR", REPO_ROOT / "build" / "image"))
ARCHIVE = IMAGE_DIR / "charge-recovery.oci.tar"



@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Run by `make image-test`, which builds both; a missing one is a failure, never a skip.
    assert ARCHIVE.is_file(), f"no image at {ARCHIVE}: make image-test builds it"
    assert shutil.which("umoci") is not None, "no umoci: scripts/install-deps.sh image installs it"
    work = tmp_path_factory.mktemp("image")
    with tarfile.open(ARCHIVE) as archive:
        # The "data" filter (no absolute paths, links out or devices) where this Python has it.
        extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(work / "layout", **extra)
    (tag,) = [m["annotations"]["org.opencontainers.image.ref.name"]
              for m in json.loads((work / "layout" / "index.json").read_text())["manifests"]]
    done = subprocess.run(["umoci", "unpack", "--image", f"{work / 'layout'}:{tag}", str(work / "bundle")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return work / "bundle"


def runtime_process(bundle: Path) -> dict[str, Any]:
    return json.loads((bundle / "config.json").read_text())["process"]


def image_command(bundle: Path, extra_args: list[str] | None = None, env: dict[str, str] | None = None) -> list[str]:
    """The bundle's process, chrooted, as its user, with exactly its environment plus `env`."""
    process = runtime_process(bundle)
    user = process["user"]
    environment = [*process["env"], *(f"{k}={v}" for k, v in (env or {}).items())]
    args = process["args"] if extra_args is None else [process["args"][0], *extra_args]
    return ["/usr/bin/env", "-i", *environment, shutil.which("chroot") or "/usr/sbin/chroot",
            f"--userspec={user['uid']}:{user['gid']}", str(bundle / "rootfs"), *args]


def test_the_image_config_is_the_containerfile_s(bundle: Path) -> None:
    process = runtime_process(bundle)
    assert process["args"] == ["/usr/local/bin/charge-recovery", "run"]
    assert (process["user"]["uid"], process["user"]["gid"]) == (65532, 65532)
    assert "GNUTLS_NO_IMPLICIT_INIT=1" in process["env"]
    summary = json.loads((IMAGE_DIR / "image.json").read_text())
    labels = summary["labels"]
    assert labels["org.opencontainers.image.title"] == "charge-recovery"
    assert labels["org.opencontainers.image.revision"] and labels["org.opencontainers.image.version"] == summary["tag"]
    assert summary["manifestDigest"].startswith("sha256:")
    # The file set is the binary, its libraries, the CA bundle and the packages' dpkg records.
    top = sorted(p.name for p in (bundle / "rootfs").iterdir())
    assert set(top) <= {"etc", "lib", "lib64", "usr", "var"}, top
    assert not (bundle / "rootfs" / "bin" / "sh").exists()


def test_the_sbom_lists_the_debian_packages_the_image_carries(bundle: Path) -> None:
    sbom = json.loads((IMAGE_DIR / "sbom.spdx.json").read_text())
    names = {p["name"] for p in sbom["packages"]}
    assert {"libc6", "libcurl4", "libssl3", "ca-certificates", "charge-recovery"} <= names
    status = {p.name for p in (bundle / "rootfs" / "var" / "lib" / "dpkg" / "status.d").iterdir()}
    assert status == names - {"charge-recovery"}, "every package has its dpkg record in the image"
    files = {f["fileName"] for f in sbom["files"]}
    image_files = {"/" + p.relative_to(bundle / "rootfs").as_posix() for p in (bundle / "rootfs").rglob("*")
                   if p.is_file() and "var/lib/dpkg" not in p.as_posix()}
    assert files == image_files


def test_the_image_consumes_charges_from_the_local_stack(
    bundle: Path, processes: ProcessManager, charge_stack: ChargeStack, fake_bank: FakeBank
) -> None:
    env = {**charge_stack.env(), **fake_bank.env(), "ADMIN_ADDR": "127.0.0.1:0", "WORKERS": "2",
           "LEASE_SECONDS": str(charge_stack.lease_seconds)}

    def started(proc: Any, timeout: float) -> dict[str, Any]:
        return proc.wait_for(lambda: next((line for line in proc.json_lines("stderr") if line.get("msg") == "consumer started"), None),
                             timeout, "consumer started")

    proc = processes.start("image-consumer", image_command(bundle, env=env), ready=started, timeout=30.0)
    consumer = Consumer(proc)
    charge_stack.send_bodies(['{"schemaVersion":1,"chargeId":"CHG-IMAGE-1","accountId":"ACC-0012345678",'
                              '"chargeType":"SMS_ALERT_FEE","amountMinor":2500,"currency":"INR","dueDate":"2026-11-30"}'])
    record = charge_stack.final_record("CHG-IMAGE-1")
    assert (record["state"], record["status"]) == ("DONE", "DEBITED")
    assert consumer.metric("ic_debits_total", result="debited") == 1
    wait_until(lambda: consumer.get("/health/ready")[0] == 200, timeout=30, description="ready")
    # env and chroot exec'd the binary in place: the process is it, running as the image's user.
    uid = Path(f"/proc/{proc.pid}/status").read_text().split("Uid:")[1].split()[0]
    assert int(uid) == 65532
