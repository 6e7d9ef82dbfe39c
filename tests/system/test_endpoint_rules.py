"""Our default AWS endpoints against botocore's own endpoint rules (issue 23 item 4).

For SQS, DynamoDB and STS, over regions of the aws, aws-cn, aws-us-gov, aws-iso and aws-iso-b
partitions and every FIPS x dual-stack combination, the URL printed by the test-only
ic_endpoint_resolve (aws::default_endpoint, what the service uses when no AWS_ENDPOINT_URL*
is set) must equal the one botocore's EndpointRulesetResolver computes from
botocore/data/<service>/*/endpoint-rule-set-1.json and partitions.json.
"""
import itertools
import os
import pathlib
import subprocess

import botocore.session
from botocore.hooks import HierarchicalEmitter
from botocore.regions import EndpointRulesetResolver

SERVICES = ["sqs", "dynamodb", "sts"]
REGIONS = [
    "us-east-1", "eu-west-1", "ap-southeast-2",  # aws
    "cn-north-1", "cn-northwest-1",  # aws-cn
    "us-gov-west-1", "us-gov-east-1",  # aws-us-gov
    "us-iso-east-1", "us-iso-west-1",  # aws-iso
    "us-isob-east-1",  # aws-iso-b
]
FLAGS = list(itertools.product([False, True], [False, True]))


def botocore_endpoint(loader, partitions, service, region, fips, dualstack):
    rules = loader.load_service_model(service, "endpoint-rule-set-1")
    model = botocore.session.get_session().get_service_model(service)
    resolver = EndpointRulesetResolver(rules, partitions, model, builtins={
        "AWS::Region": region,
        "AWS::UseFIPS": fips,
        "AWS::UseDualStack": dualstack,
        "AWS::STS::UseGlobalEndpoint": False,  # botocore's default (regional) since 1.36
        "SDK::Endpoint": None,
    }, client_context=None, event_emitter=HierarchicalEmitter())
    operation = model.operation_model(model.operation_names[0])
    return resolver.construct_endpoint(operation_model=operation, call_args={},
                                       request_context={}).url


def test_default_endpoints_match_botocore_rules():
    session = botocore.session.get_session()
    loader = session.get_component("data_loader")
    partitions = loader.load_data("partitions")
    cases = [(s, r, f, d) for s in SERVICES for r in REGIONS for f, d in FLAGS]
    binary = pathlib.Path(os.environ.get("IC_BUILD_DIR", "build/dev")) / "tests/unit/aws/ic_endpoint_resolve"
    stdin = "".join(f"{s} {r} {int(f)} {int(d)}\n" for s, r, f, d in cases)
    ours = subprocess.run([str(binary)], input=stdin, capture_output=True, text=True,
                          check=True, timeout=30).stdout.split()
    assert len(ours) == len(cases)
    mismatches = []
    for case, url in zip(cases, ours):
        expected = botocore_endpoint(loader, partitions, *case)
        if url != expected:
            mismatches.append((case, url, expected))
    assert not mismatches, "\n".join(map(str, mismatches))
    assert len(cases) == 120
