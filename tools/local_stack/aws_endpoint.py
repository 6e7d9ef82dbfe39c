"""What every local AWS emulator handle shares (moto, ElasticMQ, dynalite): boto3 clients with
dummy credentials, and the environment a child process needs to reach the emulator."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULT_REGION = "us-east-1"
DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


class AwsEndpoint:
    """Mixin: the class provides `endpoint_url` and `region`."""

    endpoint_url: str
    region: str

    def client(self, service: str, **config: Any) -> Any:
        """boto3 client for this server. `config` overrides botocore Config fields."""
        import boto3
        from botocore.config import Config

        settings: dict[str, Any] = {
            "retries": {"max_attempts": 3, "mode": "standard"},
            "connect_timeout": 2,
            "read_timeout": 30,  # above SQS's 20 s long poll
            "max_pool_connections": 64,
        }
        settings.update(config)
        return boto3.session.Session().client(
            service,
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            config=Config(**settings),
            **DUMMY_CREDENTIALS,
        )

    def sqs(self, **config: Any) -> Any:
        return self.client("sqs", **config)

    def dynamodb(self, **config: Any) -> Any:
        return self.client("dynamodb", **config)

    def env(self) -> dict[str, str]:
        """Environment for a child process (e.g. the consumer) to use this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_ACCESS_KEY_ID": DUMMY_CREDENTIALS["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": DUMMY_CREDENTIALS["aws_secret_access_key"],
            "AWS_EC2_METADATA_DISABLED": "true",
        }


# Every credential source but the ones a test sets (an empty value counts as unset).
CREDENTIAL_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
)


def keyless_env(env: Mapping[str, str], home: Path) -> dict[str, str]:
    """`env` with every credential source emptied and HOME moved, so that only what the caller
    adds (web identity, a profile) can supply credentials."""
    out = dict(env) | {name: "" for name in CREDENTIAL_VARIABLES}
    return out | {"HOME": str(home), "AWS_EC2_METADATA_DISABLED": "true"}
