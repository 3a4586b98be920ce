"""Build script uses network or a shell.

## What it checks
Every `build.rs` and proc-macro source for `std::net`, `TcpStream`, `UdpSocket` and the
HTTP crates (`reqwest`, `ureq`, `curl`, `hyper`, `attohttpc`, `isahc`, `minreq`);
`Command::new` of `curl`, `wget`, `sh`, `bash`, `nc`, `python` and friends; and
network crates in `[build-dependencies]` (`cc`, `cmake`, `pkg-config` and the like are
fine).

## Why it matters
A build that downloads or shells out at build time runs code that was never in the
reviewed source and can send what it finds anywhere.

## How to fix
Vendor what the build needs and build offline (`cargo build --offline`); replace
shell-outs with the `cc`/`cmake` crates; report network access in third-party build
scripts upstream.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe, line_hits
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.rust import crates
from ztsa.model import Outcome, Severity
from ztsa.registry import rule

NET_CRATES = frozenset({"reqwest", "ureq", "curl", "hyper", "attohttpc", "isahc", "minreq",
                        "surf", "http_req", "ftp", "ssh2", "git2", "tokio"})
SOURCE = (
    (LazyRe(r"\bstd::net\b|\b(?:TcpStream|UdpSocket|TcpListener)\b"), "opens sockets"),
    (LazyRe(r"\b(?:reqwest|ureq|curl|hyper|attohttpc|isahc|minreq)::"), "uses an HTTP client"),
    (LazyRe(r"Command::new\s*\(\s*\"(?:[^\"]*/)?(curl|wget|sh|bash|zsh|dash|nc|ncat|python3?|"
            r"perl|ruby|node|powershell|pwsh|cmd)(?:\.exe)?\""), "runs a shell or download tool"),
)


@rule(id="SUP010", slug="build-script-network-shell", severity=Severity.HIGH,
      title="Build script uses network or a shell", actions="-/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for crate in crates(ctx, f):
        for rel in crate.sources:
            text = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES)
            for lineno, i, m in line_hits(text or "", [rx for rx, _ in SOURCE]):
                f.fail(f"build code of {crate.name} {SOURCE[i][1]}: {m.group(0)[:60]!r}",
                       path=rel, line=lineno)
        bdeps = crate.manifest.data.get("build-dependencies") if crate.manifest else None
        for name in sorted(bdeps) if isinstance(bdeps, dict) else []:
            if name in NET_CRATES and crate.manifest:
                f.fail(f"{crate.name} has the network crate {name} in [build-dependencies]",
                       path=crate.manifest.path, line=crate.manifest.line(name))
    return f.outcome("no build script uses the network or a shell",
                     f"{len(f.found)} network or shell use(s) in build code")
