"""Host services on loopback.

## What it checks
TCP listeners on a loopback address (`127.0.0.0/8`, `::1`, `::ffff:127.x`) on
well-known database and admin ports: 5432 (PostgreSQL), 3306 (MySQL), 6379 (Redis),
27017 (MongoDB), 9200 (Elasticsearch), 2379 (etcd), 2375 (Docker API) and 10250
(kubelet).

## Why it matters
Loopback services often trust every local client: no password on Redis, a Docker API
without TLS, a kubelet or etcd that hands out cluster secrets. Code in the same
network namespace reaches them.

## How to fix
Run the agent in its own network namespace (`bwrap --unshare-net`, `ztsa exec` with
no `--allow-net` for these ports), or require authentication on these services.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.netinfo import listeners
from ztsa.registry import rule

PORTS = {5432: "PostgreSQL", 3306: "MySQL", 6379: "Redis", 27017: "MongoDB",
         9200: "Elasticsearch", 2379: "etcd", 2375: "Docker API", 10250: "kubelet"}


@rule(id="NET003", slug="loopback-services", title="Host services on loopback",
      severity=Severity.MEDIUM,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    hits = sorted({(ln.port, ln.show()) for ln in listeners(ctx.host)
                   if ln.loopback and ln.port in PORTS})
    if not hits:
        return Outcome.passed("no well-known service listens on loopback")
    return Outcome.failed(
        "loopback service(s): " + ", ".join(f"{PORTS[p]} ({p})" for p, _ in hits),
        [Evidence(f"{PORTS[p]} listens on {shown}") for p, shown in hits])
