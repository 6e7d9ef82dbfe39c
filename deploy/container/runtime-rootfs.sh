#!/usr/bin/env bash
# Lays out the runtime image's whole file system under OUTDIR: the binary, every shared library
# `ldd` says it loads (the dynamic loader included) under the path the loader looks for, and
# the CA bundle libcurl was compiled to read (`curl-config --ca`). deploy/Containerfile runs it
# in its build stage and copies OUTDIR into an empty image; tests/deploy/test_runtime_image.py
# runs it on the dev build and then the binary in a chroot of OUTDIR, so the image's runtime
# needs are checked without a container engine.
#
#   deploy/container/runtime-rootfs.sh BINARY OUTDIR
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BINARY OUTDIR" >&2
  exit 2
fi
binary=$1
out=$2
[ -x "$binary" ] || { echo "runtime-rootfs: $binary is not an executable file" >&2; exit 2; }
# libcurl reads this file unless told otherwise (the binary sets no CAINFO); Debian's libcurl
# says /etc/ssl/certs/ca-certificates.crt.
ca_bundle=$(curl-config --ca)
[ -s "$ca_bundle" ] || { echo "runtime-rootfs: CA bundle '$ca_bundle' is missing or empty" >&2; exit 2; }

needs=$(ldd "$binary" 2>&1) || { echo "runtime-rootfs: ldd cannot list $binary's libraries: $needs" >&2; exit 1; }
if grep -q "not found" <<<"$needs"; then
  echo "runtime-rootfs: unresolved libraries:" >&2
  grep "not found" <<<"$needs" >&2
  exit 1
fi
# "libfoo.so.1 => /lib/x86_64-linux-gnu/libfoo.so.1 (0x…)", and the loader as
# "/lib64/ld-linux-x86-64.so.2 (0x…)"; linux-vdso has no file.
mapfile -t libraries < <(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$needs")
((${#libraries[@]})) || { echo "runtime-rootfs: ldd listed no libraries (static binary?)" >&2; exit 1; }

mkdir -p "$out/usr/local/bin" "$out$(dirname "$ca_bundle")"
install -m 0555 "$binary" "$out/usr/local/bin/charge-recovery"
install -m 0444 "$ca_bundle" "$out$ca_bundle"
for library in "${libraries[@]}"; do
  mkdir -p "$out$(dirname "$library")"
  # -L: the file itself, under the name the loader asks for (no dangling symlinks).
  cp -L "$library" "$out$library"
  chmod 0555 "$out$library"
done
echo "runtime-rootfs: $out: charge-recovery, ${#libraries[@]} libraries, $ca_bundle"
