"""Container daemon or cluster reachable remotely.

## What it checks
`DOCKER_HOST` or `CONTAINER_HOST` set to `tcp://` or `ssh://` on a non-loopback
host, or to `unix://` (a daemon socket); `DOCKER_CONTEXT`; a `currentContext` other
than `default` in `~/.docker/config.json`; `DOCKER_CERT_PATH`; and `KUBECONFIG`.
Nothing is contacted.

## Why it matters
These settings point `docker`, `podman` and `kubectl` at a daemon or cluster that
runs whatever it is asked to, with its own privileges, outside the sandbox.

## How to fix
Unset these variables for the agent, and remove the context from the agent user's
docker configuration (`docker context use default`).
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule


def _loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@rule(id="NET002", slug="remote-daemon-configured", severity=Severity.HIGH,
      title="Container daemon or cluster reachable remotely",
      nature=Nature.ENV_ESCAPE, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    env = ctx.host.environ
    found: list[Evidence] = []
    for var in ("DOCKER_HOST", "CONTAINER_HOST"):
        value = env.get(var)
        if not value:
            continue
        from urllib.parse import urlsplit  # only when a daemon variable is set

        try:
            url = urlsplit(value)
            scheme, host = url.scheme, url.hostname or ""
        except ValueError:
            found.append(Evidence(f"{var} is set to an unparseable address"))
            continue
        if scheme in ("tcp", "ssh", "http", "https") and not _loopback(host):
            found.append(Evidence(f"{var} points to {scheme}://{host} (non-loopback)"))
        elif scheme in ("unix", "npipe"):
            found.append(Evidence(f"{var} points to the daemon socket {url.path}"))
        elif scheme not in ("tcp", "ssh", "http", "https"):
            found.append(Evidence(f"{var} is set ({scheme or 'no'} scheme)"))
    for var in ("DOCKER_CONTEXT", "DOCKER_CERT_PATH", "KUBECONFIG"):
        if env.get(var):
            found.append(Evidence(f"{var} is set"))
    errors = []
    home = ctx.host.home
    if home:
        cfg = f"{home}/.docker/config.json"
        try:
            text = ctx.host.read_text(cfg, limit=1 << 20)
            if text is not None:
                import json

                doc = json.loads(text)
                current = doc.get("currentContext") if isinstance(doc, dict) else None
                if current and current != "default":
                    found.append(Evidence(f"docker currentContext is {current!r}", path=cfg))
        except (ProbeError, ValueError) as exc:
            errors.append(f"{cfg}: {exc}")
    if found:
        return Outcome.failed(f"{len(found)} remote daemon or cluster setting(s)", found)
    if errors:
        return Outcome.unknown("could not read the docker configuration",
                               [Evidence(e) for e in errors])
    return Outcome.passed("no remote container daemon or cluster configured")
