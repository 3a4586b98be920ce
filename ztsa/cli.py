"""Command line. Thin: parse, call the engine, format, choose the exit code.

Exit codes: 0 gate passed; 3 gate failed; 2 usage or configuration error;
125 internal error (one line on stderr; a traceback with --debug).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from ztsa import __version__

EXIT_PASS = 0
EXIT_USAGE = 2
EXIT_GATE = 3
EXIT_INTERNAL = 125

EPILOG = """\b
Exit codes (check):
  0    the gate passed
  3    the gate failed: a gating rule is fail or unknown
  2    usage or configuration error
  125  internal error (ztsa itself failed; never a pass)
Exit codes (exec): CMD's own, or 128+N for signal N; 3 gate failed (CMD not
started); 126 cannot execute; 127 not found; 125 ztsa failed (tree killed).
"""

PROFILES = ("repo", "dependency", "untrusted")


def _use_color(stream: Any, to_file: bool) -> bool:
    if to_file or "NO_COLOR" in os.environ:
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def _endpoint(spec: str) -> tuple[str, int]:
    """IP:PORT or [IPv6]:PORT."""
    import ipaddress

    host, sep, port = spec.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(host)
        number = int(port)
        if not sep or not 0 < number < 65536:
            raise ValueError(spec)
    except ValueError:
        raise click.BadParameter(f"{spec!r} is not IP:PORT or [IPv6]:PORT") from None
    return host, number


@click.group(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ztsa")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """ztsa, the Zero-Trust Sandbox Auditor: a preflight gate for AI coding agents.

    `ztsa check` audits the environment and the workspace under a trust profile
    (repo, dependency, untrusted; default untrusted) and exits 3 if the gate fails.
    """
    ctx.obj = {"debug": debug}


def gate_options(fn: Callable[..., None]) -> Callable[..., None]:
    """The options of the gate, shared by `check` and `exec` ("the options of check")."""
    options = [
        click.option("--profile", type=click.Choice(PROFILES), default="untrusted",
                     show_default=True, help="Trust profile: what blocks and what only warns."),
        click.option("--format", "fmt", type=click.Choice(("text", "json", "sarif")),
                     default="text", show_default=True, help="Report format."),
        click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
                     help="Write the report to FILE."),
        click.option("--probe-network", is_flag=True,
                     help="Also run NET004: one 1 s TCP connect to each cloud metadata "
                          "endpoint."),
        click.option("--metadata-endpoint", "endpoints", multiple=True, metavar="IP:PORT",
                     callback=lambda c, p, v: [_endpoint(e) for e in v],
                     help="Replace NET004's endpoints (169.254.169.254:80, "
                          "[fd00:ec2::254]:80). Repeatable."),
        click.option("--exclude", "excludes", multiple=True, metavar="GLOB",
                     help="Leave workspace paths matching GLOB (relative, e.g. "
                          "'tests/fixtures') out of the file-based rules. Repeatable."),
        click.option("--allow-registry", "registries", multiple=True, metavar="HOST",
                     help="Also trust packages resolved from HOST (SUP002). Repeatable."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def run_gate(path: str, profile: str, fmt: str, output: str | None, probe_network: bool,
             endpoints: list[tuple[str, int]], excludes: tuple[str, ...],
             registries: tuple[str, ...], stream: Any, only_on_failure: bool = False) -> bool:
    """Audit PATH, write the report (to --output or stream), return whether it passed."""
    from ztsa.context import Context
    from ztsa.engine import run
    from ztsa.host import Host
    from ztsa.model import Profile
    from ztsa.output import Format, render

    ctx = Context(host=Host(), workspace=path, profile=Profile(profile),
                  options={"probe_network": probe_network, "metadata_endpoints": endpoints,
                           "exclude": list(excludes), "allow_registry": list(registries)})
    report = run(ctx)
    if only_on_failure and report.passed:
        return True
    text = render(report, Format(fmt), color=_use_color(stream, output is not None))
    if output:
        try:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            raise click.FileError(output, exc.strerror) from exc
    else:
        stream.write(text)
        stream.flush()
    return report.passed


@cli.command()
@gate_options
@click.argument("path", type=click.Path(exists=True, file_okay=False), default=".")
def check(profile: str, fmt: str, output: str | None, probe_network: bool,
          endpoints: list[tuple[str, int]], excludes: tuple[str, ...],
          registries: tuple[str, ...], path: str) -> None:
    """Audit PATH (default: the current directory) and the environment; exit 3 on failure."""
    passed = run_gate(path, profile, fmt, output, probe_network, endpoints, excludes,
                      registries, sys.stdout)
    sys.exit(EXIT_PASS if passed else EXIT_GATE)


@cli.command("exec")
@gate_options
@click.option("--workspace", type=click.Path(exists=True, file_okay=False), default=".",
              help="The workspace the gate audits (default: the current directory).")
@click.option("--allow-net", "allow_net", multiple=True, metavar="SPEC",
              help="Allow connections and sends to SPEC: HOST, HOST:PORT, IP, IP:PORT, CIDR, "
                   "CIDR:PORT or [IPv6]:PORT. Repeatable. Nothing is allowed by default.")
@click.option("--allow-unix", "allow_unix", multiple=True, metavar="PATH",
              help="Allow connecting to the Unix socket PATH (@NAME for an abstract one).")
@click.option("--dns", "dns", multiple=True, metavar="ADDR",
              help="DNS resolvers the tree may query (default: /etc/resolv.conf, and only "
                   "when --allow-net names a host).")
@click.option("--audit-log", type=click.File("w"), metavar="FILE",
              help="Write JSON-lines events to FILE.")
@click.option("--keep-cap", "keep_caps", multiple=True, metavar="NAME",
              help="Keep this capability when started by root (default: none).")
@click.option("--pass-fd", "pass_fds", multiple=True, type=int, metavar="N",
              help="Let file descriptor N reach CMD (besides 0, 1 and 2).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def exec_cmd(profile: str, fmt: str, output: str | None, probe_network: bool,
             endpoints: list[tuple[str, int]], excludes: tuple[str, ...],
             registries: tuple[str, ...], workspace: str,
             allow_net: tuple[str, ...], allow_unix: tuple[str, ...], dns: tuple[str, ...],
             audit_log: Any, keep_caps: tuple[str, ...], pass_fds: tuple[int, ...],
             command: tuple[str, ...]) -> None:
    """Run the gate on the workspace, then CMD confined: ztsa exec [OPTIONS] -- CMD [ARG...]

    Exit status: CMD's (128+N if signal N killed it); 3 if the gate failed and CMD was
    never started; 126 if CMD cannot be executed, 127 if it is not found; 125 if ztsa
    itself failed (the whole tree is killed first); 2 for usage errors.
    """
    from ztsa.sandbox.policy import Policy, PolicyError, parse_net, resolvers

    try:
        rules = [parse_net(s) for s in allow_net]
    except PolicyError as exc:
        raise click.BadParameter(str(exc), param_hint="--allow-net") from None
    names_a_host = any(not _is_ip_spec(s) for s in allow_net)
    try:
        dns_servers = resolvers(list(dns)) if (dns or names_a_host) else []
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--dns") from None
    # the report goes to stderr (stdout is CMD's), and only when the gate fails
    if not run_gate(workspace, profile, fmt, output, probe_network, endpoints, excludes,
                    registries, sys.stderr, only_on_failure=True):
        click.echo("ztsa: the gate failed; CMD was not started", err=True)
        sys.exit(EXIT_GATE)
    from ztsa.sandbox.run import execute

    policy = Policy(rules, list(allow_unix), os.path.abspath(workspace), dns_servers)
    try:
        code = execute(list(command), policy, audit_log, os.getcwd(), list(keep_caps),
                       list(pass_fds))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    sys.exit(code)


def _is_ip_spec(spec: str) -> bool:
    import ipaddress

    host = spec[1:].split("]")[0] if spec.startswith("[") else (
        spec.rsplit(":", 1)[0] if spec.count(":") == 1 else spec)
    try:
        ipaddress.ip_network(host, strict=False)
        return True
    except ValueError:
        return False


@cli.command("rules")
@click.option("--profile", type=click.Choice(PROFILES), default=None,
              help="Show only what this profile does.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text",
              show_default=True)
def rules_cmd(profile: str | None, fmt: str) -> None:
    """List the rule catalogue: ID, slug, category, severity, action per profile."""
    import json

    from ztsa.model import Profile
    from ztsa.registry import load_rules

    rules = load_rules().values()
    profiles = [Profile(profile)] if profile else list(Profile)
    if fmt == "json":
        doc = [{"id": r.id, "slug": r.slug, "category": r.category.value, "title": r.title,
                "severity": r.severity.value,
                "actions": {p.value: r.action(p).value for p in profiles}} for r in rules]
        click.echo(json.dumps(doc, indent=2))
        return
    head = "ID      SLUG                              CATEGORY SEVERITY " + " ".join(
        p.value.ljust(10) for p in profiles)
    click.echo(head.rstrip())
    for r in rules:
        acts = " ".join(r.action(p).value.ljust(10) for p in profiles)
        click.echo(f"{r.id:<7} {r.slug:<33} {r.category.value:<8} {r.severity.value:<8} "
                   f"{acts}".rstrip())


@cli.command()
@click.argument("rule_id")
def explain(rule_id: str) -> None:
    """Show a rule's documentation: what it checks, why it matters, how to fix it."""
    from ztsa.registry import load_rules

    rules = load_rules()
    rule = rules.get(rule_id.upper())
    if rule is None:
        by_slug = {r.slug: r for r in rules.values()}
        rule = by_slug.get(rule_id)
    if rule is None:
        raise click.UsageError(f"no rule {rule_id!r}; `ztsa rules` lists them")
    acts = ", ".join(f"{p.value}: {a.value}" for p, a in rule.actions.items())
    click.echo(f"{rule.id} {rule.slug}: {rule.title}")
    click.echo(f"category {rule.category.value}, severity {rule.severity.value}; {acts}")
    click.echo()
    click.echo(rule.doc.split("\n", 1)[-1].strip())


def main(argv: list[str] | None = None) -> int:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="ztsa", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("ztsa: aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        return code if isinstance(code, int) else EXIT_INTERNAL
    except BrokenPipeError:
        return EXIT_INTERNAL
    except Exception as exc:
        if debug:
            import traceback

            traceback.print_exc()
        click.echo(f"ztsa: internal error: {type(exc).__name__}: {exc}"
                   " (run with --debug for a traceback)", err=True)
        return EXIT_INTERNAL
    return 0
