#!/usr/bin/env bash
# `make image`: the runtime image of deploy/Containerfile as an OCI archive, built with umoci
# from the project's own rootfs: no container engine, no daemon and no base image to pull (the
# runtime stage is FROM scratch; its build stage is this machine, the same Debian 12 that CI
# builds and tests on). Output in build/image/:
#   charge-recovery.oci.tar   the OCI image layout as one archive (skopeo copy oci-archive:...,
#                             podman load -i ...), tag = the version
#   sbom.spdx.json            SPDX 2.3: the Debian packages whose files the image carries
#                             (tools/image_sbom.py), also in the image as
#                             /var/lib/dpkg/status.d/* for scanners
#   sbom.syft.spdx.json       the same image catalogued by syft, when syft is installed
#   image.json                digest, sizes, labels
# The image's ENV, USER, EXPOSE, ENTRYPOINT and CMD are read from deploy/Containerfile, so the
# two builds cannot drift. IC_IMAGE_BINARY=<path> packs that binary instead of building the
# release preset (the CI stage that runs the image against the local stack packs build/dev's).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${IC_IMAGE_DIR:-build/image}
binary=${IC_IMAGE_BINARY:-}
if [ -z "$binary" ]; then
  # The release build's benchmarks need what make image does not install (google-benchmark,
  # libmicrohttpd): off unless that build already has them (make release-build turns them on).
  bench=OFF
  grep -qx 'IC_BUILD_BENCH:BOOL=ON' build/release/CMakeCache.txt 2>/dev/null && bench=ON
  cmake --preset release -DIC_BUILD_BENCH=$bench >/dev/null
  cmake --build --preset release -j "${JOBS:-$(nproc)}" --target charge-recovery
  binary=build/release/src/app/charge-recovery
fi
command -v umoci >/dev/null || { echo "build-image: umoci is needed (apt-get install umoci)" >&2; exit 1; }

version_line=$("$binary" --version)           # charge-recovery 0.1.0 (commit 1a2b3c4d5e6f)
version=$(awk '{print $2}' <<<"$version_line")
commit=$(sed -n 's/.*(commit \([0-9a-f]*\)).*/\1/p' <<<"$version_line")
created=$(date -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)" +%Y-%m-%dT%H:%M:%SZ)

rm -rf "$out"
mkdir -p "$out"
cp "$binary" "$out/charge-recovery"
strip "$out/charge-recovery"
deploy/container/runtime-rootfs.sh "$out/charge-recovery" "$out/rootfs"
.venv/bin/python -m tools.image_sbom "$out/rootfs" --out "$out/sbom.spdx.json" --version "$version"

# What the Containerfile's runtime stage declares, one source for both builds.
containerfile=deploy/Containerfile
env_line=$(sed -n 's/^ENV //p' "$containerfile")
user=$(sed -n 's/^USER //p' "$containerfile")
port=$(sed -n 's/^EXPOSE //p' "$containerfile")
entrypoint=$(sed -n 's/^ENTRYPOINT \["\(.*\)"\]$/\1/p' "$containerfile")
cmd=$(sed -n 's/^CMD \["\(.*\)"\]$/\1/p' "$containerfile")
[ -n "$env_line" ] && [ -n "$user" ] && [ -n "$port" ] && [ -n "$entrypoint" ] && [ -n "$cmd" ] ||
  { echo "build-image: cannot read ENV/USER/EXPOSE/ENTRYPOINT/CMD from $containerfile" >&2; exit 1; }

layout="$out/oci"
tag=$version
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
# One layer: the whole file set, owned by root and read-only as runtime-rootfs.sh made it.
umoci insert --image "$layout:$tag" "$out/rootfs" /
config=(--config.user "$user" --config.entrypoint "$entrypoint" --config.cmd "$cmd"
        --config.exposedports "$port/tcp" --config.workingdir / --architecture amd64 --os linux
        --author "FinEdge payments platform" --created "$created" --history.created "$created"
        --history.created_by "scripts/build-image.sh (umoci insert of deploy/container/runtime-rootfs.sh's file set)")
for pair in $env_line; do config+=(--config.env "$pair"); done
labels=(
  "org.opencontainers.image.title=charge-recovery"
  "org.opencontainers.image.description=Exactly-once recorded debits of FinEdge service charges from SQS, idempotent through DynamoDB"
  "org.opencontainers.image.version=$version"
  "org.opencontainers.image.revision=$commit"
  "org.opencontainers.image.created=$created"
  "org.opencontainers.image.vendor=FinEdge"
  "org.opencontainers.image.licenses=NOASSERTION"
  "org.opencontainers.image.source=https://git.finedge.internal/payments/idempotent-consumer"
  "org.opencontainers.image.documentation=https://git.finedge.internal/payments/idempotent-consumer/-/blob/main/deploy/README.md"
  "org.opencontainers.image.base.name=scratch"
)
for label in "${labels[@]}"; do config+=(--config.label "$label" --manifest.annotation "$label"); done
umoci config --image "$layout:$tag" "${config[@]}"
umoci gc --layout "$layout"
# An OCI archive is the layout as a tar; sorted and with fixed metadata so equal blobs give an
# equal archive.
tar --sort=name --mtime="$created" --owner=0 --group=0 --numeric-owner -C "$layout" -cf "$out/charge-recovery.oci.tar" .

syft=$(command -v .venv/bin/syft || command -v syft || true)
if [ -n "$syft" ]; then
  "$syft" scan "oci-dir:$layout" -q -o "spdx-json=$out/sbom.syft.spdx.json"
else
  echo "build-image: no syft (requirements/image.txt installs it into .venv); only tools/image_sbom.py's SBOM" >&2
fi
.venv/bin/python - "$out" "$layout" "$tag" <<'PY'
import json, sys
from pathlib import Path
out, layout, tag = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
index = json.loads((layout / "index.json").read_text())
(manifest_ref,) = [m for m in index["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag]
blob = lambda d: layout / "blobs" / d.split(":")[0] / d.split(":")[1]
manifest = json.loads(blob(manifest_ref["digest"]).read_text())
config = json.loads(blob(manifest["config"]["digest"]).read_text())
summary = {
    "tag": tag, "manifestDigest": manifest_ref["digest"],
    "layers": [{"digest": l["digest"], "compressedBytes": l["size"]} for l in manifest["layers"]],
    "compressedBytes": sum(l["size"] for l in manifest["layers"]),
    "uncompressedBytes": sum(p.stat().st_size for p in (out / "rootfs").rglob("*") if p.is_file()),
    "archiveBytes": (out / "charge-recovery.oci.tar").stat().st_size,
    "config": {k: config["config"].get(k) for k in ("User", "Entrypoint", "Cmd", "Env", "ExposedPorts")},
    "labels": config["config"].get("Labels", {}),
}
(out / "image.json").write_text(json.dumps(summary, indent=1) + "\n")
print(f"build-image: {out}/charge-recovery.oci.tar {manifest_ref['digest']}: {summary['compressedBytes'] / 2**20:.1f} MiB compressed, "
      f"{summary['uncompressedBytes'] / 2**20:.1f} MiB unpacked")
PY
