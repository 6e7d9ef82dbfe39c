"""JSON schemas for kubeconform, offline, from what package registries ship.

kubeconform finds schemas through path templates and would normally download them. Two
sources are turned into its file layouts here:

- `core`: Kubernetes' own schemas from the PyPI package kubernetes-validate (which vendors
  them per Kubernetes version). Its files name each other by web address (`$id`
  https://kubernetes.io/api/…, `$ref` /api/_definitions.json#…), which kubeconform would
  fetch; the copies refer to the `_definitions.json` beside them instead. Layout:
  `<out>/v<version>-local-strict/<kind>-<group>-<version>.json`, i.e. kubeconform's
  `{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`.
- `crd`: the `openAPIV3Schema` of each version of CustomResourceDefinition files (deploy/check.sh
  takes KEDA's from KEDA's Go module). Like kubeconform's openapi2jsonschema.py in strict mode,
  every object that lists its properties (and does not preserve unknown fields) refuses other
  ones, so a misspelt field fails instead of being ignored. Layout:
  `<out>/<group>/<kind>_<version>.json`, i.e. `{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`.

    .venv/bin/python -m tools.kube_schemas core --out DIR 1.30.0 1.37.0
    .venv/bin/python -m tools.kube_schemas crd --out DIR CRD.yaml [CRD.yaml ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

SHARED = "_definitions.json"


def strict(schema: Any) -> Any:
    """A copy of an OpenAPI v3 schema in which listed properties are the only ones allowed."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: strict(value) for key, value in schema.items()}
    if "properties" in out:
        # "properties" maps names to schemas: its keys are not keywords.
        out["properties"] = {name: strict(value) for name, value in schema["properties"].items()}
        if "additionalProperties" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    return out


def crd_schemas(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Relative output path -> JSON schema, for each version of one CRD."""
    if crd.get("kind") != "CustomResourceDefinition":
        raise ValueError(f"not a CustomResourceDefinition: kind {crd.get('kind')!r}")
    spec = crd["spec"]
    kind = spec["names"]["kind"].lower()
    out = {}
    for version in spec["versions"]:
        schema = version.get("schema", {}).get("openAPIV3Schema")
        if schema is None:
            raise ValueError(f"{kind} {version['name']}: no openAPIV3Schema")
        out[f"{spec['group']}/{kind}_{version['name']}.json"] = strict(schema)
    return out


def local_refs(schema: Any) -> Any:
    """A copy with `$ref`s to /api/_definitions.json made relative and `$id`s removed."""
    if isinstance(schema, list):
        return [local_refs(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "$id" and isinstance(value, str):
            continue
        if key == "$ref" and isinstance(value, str) and value.startswith("/api/" + SHARED):
            value = value.removeprefix("/api/")
        out[key] = local_refs(value) if key != "properties" else {n: local_refs(v) for n, v in value.items()}
    return out


def core_schemas(version: str) -> dict[str, dict[str, Any]]:
    """Relative output path -> JSON schema for one Kubernetes version (e.g. 1.30.0)."""
    import kubernetes_validate  # the venv's; imported here so `crd` works without it

    name = f"v{version}-local-strict"
    source = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / name
    if not (source / SHARED).is_file():
        raise ValueError(f"kubernetes-validate has no schemas for Kubernetes {version} ({source})")
    return {f"{name}/{path.name}": local_refs(json.loads(path.read_text())) for path in source.glob("*.json")}


def write(out: Path, schemas: dict[str, dict[str, Any]]) -> int:
    for relative, schema in schemas.items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(schema, sort_keys=True) + "\n")
    return len(schemas)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="source", required=True)
    core = sub.add_parser("core", help="Kubernetes schemas from kubernetes-validate")
    core.add_argument("--out", required=True, type=Path)
    core.add_argument("versions", nargs="+")
    crd = sub.add_parser("crd", help="schemas from CustomResourceDefinition files")
    crd.add_argument("--out", required=True, type=Path)
    crd.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    written = 0
    try:
        if args.source == "core":
            for version in args.versions:
                written += write(args.out, core_schemas(version))
        else:
            for path in args.files:
                for document in yaml.safe_load_all(path.read_text()):
                    if document is not None:
                        written += write(args.out, crd_schemas(document))
    except (OSError, ValueError, KeyError, yaml.YAMLError) as e:
        print(f"kube_schemas: {e}", file=sys.stderr)
        return 1
    print(f"kube_schemas: {written} {args.source} schemas in {args.out}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
