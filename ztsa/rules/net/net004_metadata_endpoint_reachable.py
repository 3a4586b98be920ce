"""Cloud metadata endpoint reachable.

## What it checks
Only with `--probe-network`: one TCP connection, with a 1 second timeout, to each
cloud metadata endpoint (by default `169.254.169.254:80` and `[fd00:ec2::254]:80`;
`--metadata-endpoint HOST:PORT` replaces the list). A completed connection fails the
rule. Without the flag the rule is not run, and the report says so.

## Why it matters
The metadata service hands out the machine's cloud credentials to any local process
that asks. From a sandbox it is the shortest way from code execution to the cloud
account.

## How to fix
Block the metadata addresses for the agent (a network namespace without a route to
them, an egress allowlist such as `ztsa exec --allow-net`), or require IMDSv2 with a
hop limit of 1 so that containers cannot reach it.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

DEFAULT_ENDPOINTS = (("169.254.169.254", 80), ("fd00:ec2::254", 80))
TIMEOUT = 1.0


@rule(id="NET004", slug="metadata-endpoint-reachable", opt_in="probe_network",
      title="Cloud metadata endpoint reachable", severity=Severity.HIGH,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    if not ctx.options.get("probe_network"):  # the engine skips it too; never send by accident
        return Outcome.unknown("NET004 sends packets and runs only with --probe-network")
    import ipaddress

    endpoints = ctx.options.get("metadata_endpoints") or DEFAULT_ENDPOINTS
    reached, tried = [], []
    for host, port in endpoints:
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return Outcome.unknown(f"endpoint {shown} is not an IP address "
                                   "(ztsa makes no DNS lookups here)")
        why = ctx.host.tcp_probe(host, port, TIMEOUT)
        if why is None:
            reached.append(Evidence(f"TCP connection to {shown} completed"))
        else:
            tried.append(Evidence(f"{shown}: {why}"))
    if reached:
        return Outcome.failed(f"{len(reached)} metadata endpoint(s) reachable", reached + tried)
    return Outcome.passed("no metadata endpoint reachable", tried)
