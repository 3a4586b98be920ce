"""Orchestrator or cloud credentials mounted.

## What it checks
A Kubernetes service-account token at
`/var/run/secrets/kubernetes.io/serviceaccount/token`, and the variables
`KUBERNETES_SERVICE_HOST`, `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`,
`AWS_CONTAINER_CREDENTIALS_FULL_URI`, `AWS_WEB_IDENTITY_TOKEN_FILE` and
`GOOGLE_APPLICATION_CREDENTIALS`.

## Why it matters
These hand the workload's cloud or cluster identity to any process that asks: a
service-account token can often list secrets or start pods; container credentials
reach the cloud account.

## How to fix
Run agents in pods with `automountServiceAccountToken: false`, without a task or
workload identity role, and without credential variables in their environment.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"
VARS = ("KUBERNETES_SERVICE_HOST", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE",
        "GOOGLE_APPLICATION_CREDENTIALS")


@rule(id="FS008", slug="cloud-credentials-mounted", severity=Severity.CRITICAL,
      title="Orchestrator or cloud credentials mounted",
      nature=Nature.ENV_SECRETS, actions="-/B/B")
def check(ctx: Context) -> Outcome:
    found = [Evidence(f"{v} is set") for v in VARS if ctx.host.environ.get(v)]
    if ctx.host.exists(TOKEN):
        found.insert(0, Evidence("Kubernetes service-account token is mounted", path=TOKEN))
    if found:
        return Outcome.failed(f"{len(found)} orchestrator or cloud credential(s)", found)
    return Outcome.passed("no orchestrator or cloud credential")
