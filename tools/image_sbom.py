"""The runtime image's Debian package metadata and its SBOM (SPDX 2.3 JSON), from its rootfs.

The image (scripts/build-image.sh) is an empty image plus deploy/container/runtime-rootfs.sh's
file set: the binary, the shared libraries it loads and the CA bundle, copied from this Debian
12 machine. Each copied file belongs to a Debian package; this finds which (`dpkg -S`), and

- writes that package's dpkg record to `<rootfs>/var/lib/dpkg/status.d/<package>`, the layout
  distroless images use, so an image scanner (Trivy, Grype, syft) sees the packages and their
  versions instead of anonymous files (without it a scanner reports nothing, which is worse
  than what it would find);
- writes an SPDX 2.3 document listing every package (name, version, source package, purl
  `pkg:deb/debian/...`, the licences its DEP-5 copyright file names) and every file of the
  image (SHA-256) with the package that CONTAINS it.

    .venv/bin/python -m tools.image_sbom ROOTFS --out SBOM.spdx.json --name charge-recovery --version 0.1.0
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

OWN_BINARY = "/usr/local/bin/charge-recovery"
# Files no package ships but a package's maintainer script generates: the CA bundle is
# update-ca-certificates' concatenation of the ca-certificates package's certificates.
GENERATED_BY = {"/etc/ssl/certs/ca-certificates.crt": "ca-certificates"}
FIELDS = "${Package}\t${Version}\t${Architecture}\t${source:Package}\t${source:Version}\t${Homepage}"


def owning_package(path: str) -> str | None:
    """The package that ships `path` (merged /usr: the database may name either spelling)."""
    if path in GENERATED_BY:
        return GENERATED_BY[path]
    candidates = [path]
    if path.startswith("/usr/lib/"):
        candidates.append(path.removeprefix("/usr"))
    elif path.startswith("/lib/") or path.startswith("/lib64/"):
        candidates.append("/usr" + path)
    for candidate in candidates:
        done = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            # "libssl3:amd64: /lib/x86_64-linux-gnu/libssl.so.3"; diversions say "diversion by".
            for line in done.stdout.splitlines():
                if ": " in line and not line.startswith("diversion"):
                    return line.split(": ", 1)[0]
    return None


def package_fields(package: str) -> dict[str, str]:
    out = subprocess.run(["dpkg-query", "-W", "-f", FIELDS, package], capture_output=True, text=True, check=True).stdout
    name, version, arch, source, source_version, homepage = out.split("\t")
    return {"name": name, "version": version, "arch": arch, "source": source or name,
            "source_version": source_version or version, "homepage": homepage}


def licences(package: str) -> list[str]:
    """The `License:` short names of the package's DEP-5 copyright file (empty when it is not DEP-5)."""
    name = package.split(":", 1)[0]
    path = Path("/usr/share/doc") / name / "copyright"
    if not path.is_file():
        return []
    found = re.findall(r"^License:\s*(\S.*?)\s*$", path.read_text(errors="replace"), re.MULTILINE)
    return sorted(set(found))


def spdx_id(text: str) -> str:
    return "SPDXRef-" + re.sub(r"[^A-Za-z0-9.-]", "-", text)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(rootfs: Path, name: str, version: str) -> dict:
    files = sorted(p for p in rootfs.rglob("*") if p.is_file() and "var/lib/dpkg" not in p.as_posix())
    by_package: dict[str, list[Path]] = {}
    unowned: list[Path] = []
    for f in files:
        image_path = "/" + f.relative_to(rootfs).as_posix()
        if image_path == OWN_BINARY:
            continue
        package = owning_package(image_path)
        (by_package.setdefault(package, []) if package else unowned).append(f)
    if unowned:
        raise SystemExit(f"image_sbom: no Debian package owns {[str(u) for u in unowned]}")

    status_dir = rootfs / "var" / "lib" / "dpkg" / "status.d"
    status_dir.mkdir(parents=True, exist_ok=True)
    own = spdx_id(f"Package-{name}")
    packages = [{
        "SPDXID": own, "name": name, "versionInfo": version, "supplier": "Organization: FinEdge",
        "downloadLocation": "NOASSERTION", "filesAnalyzed": False, "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "NOASSERTION", "copyrightText": "NOASSERTION", "primaryPackagePurpose": "APPLICATION",
    }]
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": own}]
    spdx_files = [{"SPDXID": spdx_id("File" + OWN_BINARY), "fileName": OWN_BINARY,
                   "checksums": [{"algorithm": "SHA256", "checksumValue": sha256(rootfs / OWN_BINARY.lstrip("/"))}],
                   "licenseConcluded": "NOASSERTION", "copyrightText": "NOASSERTION"}]
    relationships.append({"spdxElementId": own, "relationshipType": "CONTAINS", "relatedSpdxElement": spdx_files[0]["SPDXID"]})
    for package, owned in sorted(by_package.items()):
        fields = package_fields(package)
        status = subprocess.run(["dpkg-query", "-s", package], capture_output=True, text=True, check=True).stdout
        (status_dir / fields["name"]).write_text(status)
        pid = spdx_id(f"Package-deb-{fields['name']}")
        declared = licences(package)
        purl = (f"pkg:deb/debian/{fields['name']}@{fields['version']}?arch={fields['arch']}&distro=debian-12"
                + (f"&upstream={fields['source']}" if fields["source"] != fields["name"] else ""))
        packages.append({
            "SPDXID": pid, "name": fields["name"], "versionInfo": fields["version"],
            "supplier": "Organization: Debian", "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
            "sourceInfo": f"Debian source package {fields['source']} {fields['source_version']}",
            "homepage": fields["homepage"] or "NOASSERTION",
            "licenseConcluded": "NOASSERTION",
            # Debian's copyright files name licences their own way (DEP-5 short names), not always SPDX ids.
            "licenseDeclared": "NOASSERTION",
            "licenseComments": ("DEP-5 licences: " + ", ".join(declared)) if declared else "copyright file not machine-readable",
            "copyrightText": "NOASSERTION",
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl", "referenceLocator": purl}],
        })
        relationships.append({"spdxElementId": own, "relationshipType": "DEPENDS_ON", "relatedSpdxElement": pid})
        for f in owned:
            image_path = "/" + f.relative_to(rootfs).as_posix()
            fid = spdx_id("File" + image_path)
            spdx_files.append({"SPDXID": fid, "fileName": image_path,
                               "checksums": [{"algorithm": "SHA256", "checksumValue": sha256(f)}],
                               "licenseConcluded": "NOASSERTION", "copyrightText": "NOASSERTION"})
            relationships.append({"spdxElementId": pid, "relationshipType": "CONTAINS", "relatedSpdxElement": fid})
    return {
        "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{name}-{version}-image",
        "documentNamespace": f"https://finedge.example/spdx/{name}-{version}-{uuid.uuid4()}",
        "creationInfo": {"created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                         "creators": ["Tool: tools/image_sbom.py (dpkg -S / dpkg-query)"]},
        "packages": packages, "files": spdx_files, "relationships": relationships,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rootfs", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--name", default="charge-recovery")
    parser.add_argument("--version", required=True)
    args = parser.parse_args(argv)
    document = build(args.rootfs, args.name, args.version)
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    debs = [p for p in document["packages"] if p["supplier"] == "Organization: Debian"]
    print(f"image_sbom: {args.out}: {len(debs)} Debian packages, {len(document['files'])} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
