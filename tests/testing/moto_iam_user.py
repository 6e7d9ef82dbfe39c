"""Creates an IAM user allowed to do everything, with an access key, in a moto server, and
prints the key as one JSON line: {"AccessKeyId": ..., "SecretAccessKey": ...}.

    .venv/bin/python tests/testing/moto_iam_user.py http://127.0.0.1:PORT

Used by the SigV4 end-to-end test: moto enforces signatures once INITIAL_NO_AUTH_ACTION_COUNT
requests have been served, and these three IAM calls are those unauthenticated requests.
IAM speaks the query protocol, which our JSON client does not, hence boto3.
"""

from __future__ import annotations

import json
import sys

import boto3


def main(endpoint: str) -> None:
    iam = boto3.client(
        "iam",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="AKIDBOOTSTRAP",
        aws_secret_access_key="bootstrap",
    )
    user = "ic-signing-test"
    iam.create_user(UserName=user)
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    iam.put_user_policy(UserName=user, PolicyName="all", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName=user)["AccessKey"]
    print(json.dumps({"AccessKeyId": key["AccessKeyId"], "SecretAccessKey": key["SecretAccessKey"]}))


if __name__ == "__main__":
    main(sys.argv[1])
