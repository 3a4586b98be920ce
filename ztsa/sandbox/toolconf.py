"""The person's tool configuration in the private home, without its secrets.

The files that configure the toolchains a command runs (Cargo, npm, pip, uv, git, SSH)
are read from the real home by ztsa, parsed, and written into the private home as a
copy that holds only an allowlist of keys that carry no credential. Nothing is copied
by filtering out what looks like a token (`_auth`, a password in a URL,
`http.extraHeader`, a Cargo `token` all do): a key not on the list is not there. A URL
with userinfo (`https://user:token@host`, `https://token@host`; for git over SSH a
user name alone is kept: `git@host:`) or a query string is left out with its key. A
file ztsa cannot parse is not shown at all (one line on stderr says so); `--secret`
is how a token gets in.

The copies are ztsa's, made before the tree starts, and bound read-only in the
tree's view (`prepare` returns them; without a mount namespace they are 0400 files of
the run's own). Only files that exist are read, and their parsers are imported then;
a TOML file's parse goes through the parse cache (`tomllib` costs a start-up).

Where each goes is where the tool looks when HOME is the private home (the tree's
environment is left as it is: a CARGO_HOME or XDG_CONFIG_HOME set with --env makes
the tool look elsewhere). OpenSSH reads its files from the password database's home,
which stays hidden: the copy of `~/.ssh/config` names the copy of `known_hosts`, and
git is given `core.sshCommand = ssh -F <that copy>` in its global configuration
(below a repository's own, and below GIT_SSH_COMMAND or GIT_SSH when the tree's
environment sets one: then none is given)."""

from __future__ import annotations

import contextlib
import os
import stat

from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ztsa.manifests.parsecache import ParseCache

MAX_BYTES = 1 << 20  # a configuration larger than this is not read


class Shown(NamedTuple):
    files: tuple[str, ...] = ()  # the copies written in the private home
    notes: tuple[str, ...] = ()  # a line for each file not shown, for stderr


class Unparsable(Exception):
    """A file ztsa cannot parse: not shown."""


# what a value may be made of (character sets, not regular expressions: each of those
# costs its compilation at every run)
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_NAME = _ALNUM + "._-"
_BOOL = ("true", "false", "yes", "no", "on", "off", "1", "0")


def _only(text: str, chars: str) -> bool:
    """text is not empty and made of chars alone."""
    return bool(text) and not text.strip(chars)


def url_ok(url: str, ssh_user: bool = False) -> bool:
    """No credential in URL: no userinfo (a user name alone in an SSH URL or git's
    user@host:path when ssh_user), no query string, no control character."""
    if not url or "?" in url or any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return False
    scheme, sep, rest = url.partition("://")
    if not sep or not _only(scheme, _ALNUM + "+.-") or not scheme[0].isalpha():
        # a path, host:port, or git's user@host:path
        user, at, host = url.partition("@")
        return not at or (ssh_user and _only(user, _NAME) and ":" in host
                          and _only(host.partition(":")[0], _NAME) and "@" not in host)
    authority = rest.split("/", 1)[0].split("#", 1)[0]
    user, at, _ = authority.rpartition("@")
    return not at or (ssh_user and scheme.lower() in ("ssh", "git+ssh", "ssh+git")
                      and _only(user, _NAME))


# -- Cargo ---------------------------------------------------------------------------------

_CARGO_SOURCE = {"replace-with": "name", "registry": "url", "local-registry": "path",
                 "directory": "path", "git": "url", "branch": "name", "tag": "name",
                 "rev": "name"}


def cargo(doc: dict[str, Any], source: str) -> dict[str, Any]:
    """A Cargo config's [source.*] (replacements), [registries.*] index and protocol,
    [registry] default, [net] git-fetch-with-cli, offline and retry, [http] proxy and
    timeout. Never [build] or [target] (rustflags and linkers run programs), tokens,
    credential providers, [alias] or [env]. A relative path is made absolute: Cargo
    reads it from the directory that holds the config's .cargo."""
    base = os.path.dirname(os.path.dirname(source))
    out: dict[str, Any] = {}
    sources: dict[str, Any] = {}
    for name, table in _tables(doc.get("source")):
        kept: dict[str, Any] = {}
        for key, kind in _CARGO_SOURCE.items():
            value = table.get(key)
            if not isinstance(value, str) or not value:
                continue
            if kind == "url" and not url_ok(value):
                continue
            if kind == "path":
                if any(ord(c) < 0x20 for c in value):
                    continue
                value = os.path.join(base, value)
            kept[key] = value
        if kept:
            sources[name] = kept
    registries: dict[str, Any] = {}
    for name, table in _tables(doc.get("registries")):
        kept = {}
        index = table.get("index")
        if isinstance(index, str) and url_ok(index):
            kept["index"] = index
        if table.get("protocol") in ("sparse", "git"):
            kept["protocol"] = table["protocol"]
        if kept:
            registries[name] = kept
    registry = doc.get("registry")
    if isinstance(registry, dict) and isinstance(registry.get("default"), str):
        out["registry"] = {"default": registry["default"]}
    net = _typed(doc.get("net"), {"git-fetch-with-cli": bool, "offline": bool, "retry": int})
    http = _typed(doc.get("http"), {"timeout": int, "proxy": str})
    if "proxy" in http and not url_ok(http["proxy"]):
        del http["proxy"]
    for name, table in (("source", sources), ("registries", registries), ("net", net),
                        ("http", http)):
        if table:
            out[name] = table
    return out


def _tables(value: object) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(value, dict):
        return []
    return [(k, v) for k, v in value.items() if isinstance(v, dict)]


def _typed(table: object, keys: dict[str, type]) -> dict[str, Any]:
    if not isinstance(table, dict):
        return {}
    # bool is an int: a number must not be one
    return {k: table[k] for k, t in keys.items() if k in table
            and isinstance(table[k], t) and (t is bool or not isinstance(table[k], bool))}


# -- uv ------------------------------------------------------------------------------------

def uv(doc: dict[str, Any], source: str) -> dict[str, Any]:
    """uv.toml's index-url, extra-index-url, find-links, no-index, offline, native-tls,
    and each [[index]]'s name, url, default and explicit (an index whose URL holds a
    credential is left out whole). Never publish-url, [pip], or anything else."""
    out: dict[str, Any] = {}
    if isinstance(doc.get("index-url"), str) and url_ok(doc["index-url"]):
        out["index-url"] = doc["index-url"]
    for key in ("extra-index-url", "find-links"):
        urls = doc.get(key)
        if isinstance(urls, list):
            kept = [u for u in urls if isinstance(u, str) and url_ok(u)]
            if kept:
                out[key] = kept
    out.update(_typed(doc, {"no-index": bool, "offline": bool, "native-tls": bool}))
    indexes = []
    listed = doc.get("index")
    for entry in listed if isinstance(listed, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str) \
                or not url_ok(entry["url"]):
            continue
        kept_entry: dict[str, Any] = {"url": entry["url"]}
        if isinstance(entry.get("name"), str):
            kept_entry["name"] = entry["name"]
        kept_entry.update(_typed(entry, {"default": bool, "explicit": bool}))
        indexes.append(kept_entry)
    if indexes:
        out["index"] = indexes
    return out


def toml_text(doc: dict[str, Any]) -> str:
    """doc (tables, arrays of tables, strings, booleans, integers, lists of strings) as
    TOML."""
    lines: list[str] = []

    def is_table(v: object) -> bool:
        return isinstance(v, dict) or (isinstance(v, list) and bool(v)
                                       and isinstance(v[0], dict))

    def scalars(table: dict[str, Any]) -> None:
        for k, v in table.items():
            if not is_table(v):
                lines.append(f"{_toml_key(k)} = {_toml_value(v)}")

    def tables(table: dict[str, Any], path: list[str]) -> None:
        for k, v in table.items():
            if isinstance(v, dict):
                # a table of tables alone needs no header of its own
                if not v or not all(is_table(x) for x in v.values()):
                    lines.append(f"\n[{'.'.join(_toml_key(p) for p in [*path, k])}]")
                    scalars(v)
                tables(v, [*path, k])
            elif isinstance(v, list) and v and isinstance(v[0], dict):
                for item in v:
                    lines.append(f"\n[[{'.'.join(_toml_key(p) for p in [*path, k])}]]")
                    scalars(item)

    scalars(doc)
    tables(doc, [])
    return "\n".join(lines).lstrip("\n") + "\n"


def _toml_key(key: str) -> str:
    return key if _only(key, _ALNUM + "_-") else _toml_string(key)


def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return _toml_string(str(v))


def _toml_string(s: str) -> str:
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


# -- npm -----------------------------------------------------------------------------------

def npmrc(text: str, homes: list[str]) -> str:
    """.npmrc's registry and @scope:registry, strict-ssl, and cafile when it names a
    readable file outside the homes (a certificate the tree can read). Never _auth,
    _authToken, _password, username, email, certfile, keyfile or any //host/: key."""
    out = []
    for key, value in npmrc_entries(text):
        scope = key.removesuffix(":registry")
        if key == "registry" or (scope != key and scope.startswith("@")
                                 and _only(scope[1:], _NAME)):
            keep = url_ok(value)
        elif key == "strict-ssl":
            keep = value in ("true", "false")
        elif key == "cafile":
            keep = _public_file(value, homes)
        else:
            keep = False
        shown = _npm_value(value) if keep else None
        if shown is not None:
            out.append(f"{key}={shown}")
    return "".join(f"{line}\n" for line in out)


def npmrc_entries(text: str) -> list[tuple[str, str]]:
    """The top-level (key, value) pairs of an .npmrc, as npm's ini reader takes them:
    `;` and `#` start comments, a quoted value is unquoted, an unquoted one ends at an
    unescaped `;` or `#`, a key alone is true; what follows a [section] is not
    top-level. Unparsable: an unclosed [section] or an empty key."""
    out: list[tuple[str, str]] = []
    section = False
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise Unparsable(f"line {n}: an unclosed section")
            section = True
            continue
        key, sep, value = line.partition("=")
        key = _npm_unquote(key.strip())
        if not key:
            raise Unparsable(f"line {n}: no key")
        if not section:
            out.append((key, _npm_unquote(value.strip()) if sep else "true"))
    return out


def _npm_unquote(v: str) -> str:
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        inner = v[1:-1]
        if v[0] == '"' and "\\" not in inner:
            return inner
        if v[0] == "'":
            return inner
    out, escaped = [], False
    for c in v:
        if escaped:
            out.append(c if c in "\\;#" else "\\" + c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in ";#":
            break
        else:
            out.append(c)
    return "".join(out).strip()


def _npm_value(v: str) -> str | None:
    """v as npm's ini reader reads it back (None: not written)."""
    if v != v.strip() or not v:
        return None
    if not any(c in v for c in ";#\"'\\"):
        return v
    return f"'{v}'" if "'" not in v and not v.startswith(('"', "[", "{")) else None


def _public_file(path: str, homes: list[str]) -> bool:
    """An absolute path to a readable regular file that lies in no home and is none of
    the secrets the tree may never read."""
    from ztsa.sandbox.landlock import unreadable

    if not os.path.isabs(path) or not os.path.isfile(path) or not os.access(path, os.R_OK):
        return False
    real = os.path.realpath(path)
    never = [os.path.realpath(p) for p in [*homes, *unreadable([])]]
    return not any(real == p or real.startswith(p.rstrip("/") + "/") for p in never)


# -- pip -----------------------------------------------------------------------------------

def pip_conf(text: str, source: str) -> str:
    """pip.conf's index-url, extra-index-url and find-links (each URL without a
    credential), no-index, trusted-host and timeout, in any section. Never cert or
    client-cert paths, proxy, or anything else. Read as pip reads it
    (RawConfigParser: a duplicate section or key is an error)."""
    import configparser

    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text, source)
    except configparser.Error as exc:
        raise Unparsable(str(exc).splitlines()[0]) from None
    lines: list[str] = []
    for section in parser.sections():
        kept: list[str] = []
        for key, value in parser.items(section):
            name = key.replace("_", "-").lstrip("-")
            values = value.split()
            if name == "index-url":
                values = values if len(values) == 1 and url_ok(values[0]) else []
            elif name in ("extra-index-url", "find-links"):
                values = [v for v in values if url_ok(v)]
            elif name == "no-index":
                values = values if len(values) == 1 and values[0].lower() in _BOOL else []
            elif name == "trusted-host":
                values = [v for v in values if _only(v, _NAME + ":[]")]
            elif name == "timeout":
                values = values if len(values) == 1 and _only(values[0], "0123456789.") else []
            else:
                values = []
            if len(values) == 1:
                kept.append(f"{key} = {values[0]}")
            elif values:
                kept.append(f"{key} =" + "".join(f"\n    {v}" for v in values))
        if kept and "]" not in section and "\n" not in section:
            lines.append(f"[{section}]\n" + "\n".join(kept) + "\n")
    return "\n".join(lines)


# -- git -----------------------------------------------------------------------------------

def gitconfig(text: str, name: str) -> list[tuple[str, str, str]]:
    """(section, key, value), in order: url.<base>.insteadOf and pushInsteadOf (neither
    URL with a credential), init.defaultBranch, core.autocrlf. Never user.* (given
    apart: toolchains.git_identity), credential.*, http.*.extraHeader, core.sshCommand,
    core.fsmonitor, aliases, includes or hooks. Read by ztsa.parsing.parse_git_config;
    includes are not followed."""
    from ztsa.parsing import ParseError, parse_git_config

    try:
        entries = parse_git_config(text, name)
    except ParseError as exc:
        raise Unparsable(exc.reason) from None
    out: list[tuple[str, str, str]] = []
    for section, key, value, _ in entries:
        if '"' in value or "\\" in value or '"' in section or "\\" in section:
            continue  # quoting that git reads otherwise than ztsa's parser
        if section.startswith("url.") and key in ("insteadof", "pushinsteadof"):
            if url_ok(section[4:], ssh_user=True) and url_ok(value, ssh_user=True):
                out.append((section, "insteadOf" if key == "insteadof" else "pushInsteadOf",
                            value))
        elif section == "init" and key == "defaultbranch" and _only(value, _NAME + "/"):
            out.append(("init", "defaultBranch", value))
        elif section == "core" and key == "autocrlf" and value.lower() in (
                "true", "false", "input"):
            out.append(("core", "autocrlf", value.lower()))
    return out


def git_text(entries: list[tuple[str, str, str]]) -> str:
    lines = []
    for section, key, value in entries:
        head, dot, sub = section.partition(".")
        lines.append(f'[{head} "{sub}"]' if dot else f"[{head}]")
        lines.append(f'\t{key} = "{value}"')
    return "".join(f"{line}\n" for line in lines)


# -- SSH -----------------------------------------------------------------------------------

_SSH_KEYS = {"hostname": "HostName", "port": "Port", "user": "User",
             "hostkeyalgorithms": "HostKeyAlgorithms",
             "stricthostkeychecking": "StrictHostKeyChecking"}


def ssh_config(text: str) -> str:
    """ssh_config's Host blocks with HostName, Port, User, HostKeyAlgorithms and
    StrictHostKeyChecking yes, and those before the first Host. Never IdentityFile,
    ProxyCommand, ProxyJump, LocalCommand, Include, ControlPath, a Match block (`Match
    exec` runs a program), or any other keyword. Unparsable: a line without a keyword
    and its argument, or with an unbalanced quote."""
    blocks: list[tuple[str, list[str]]] = [("", [])]
    skipping = False
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        # `Keyword value` or `Keyword=value`, as ssh splits it
        cut = next((i for i, c in enumerate(line) if c in " \t="), len(line))
        keyword, value = line[:cut].lower(), line[cut:].strip(" \t")
        value = value[1:].strip(" \t") if value.startswith("=") else value
        if not _only(keyword, _ALNUM) or not value or value.count('"') % 2:
            raise Unparsable(f"line {n}: cannot parse {line[:60]!r}")
        if keyword == "host":
            blocks.append((f"Host {value}", []))
            skipping = False
        elif keyword == "match":
            skipping = True
        elif not skipping and keyword in _SSH_KEYS and (
                keyword != "port" or value.isdigit()) and (
                keyword != "stricthostkeychecking" or value.lower() == "yes"):
            blocks[-1][1].append(f"{_SSH_KEYS[keyword]} {value}")
    out = [f"{line}\n" for line in blocks[0][1]]
    for head, lines in blocks[1:]:
        if lines:
            out.append(f"\n{head}\n" + "".join(f"    {line}\n" for line in lines))
    return "".join(out)


def known_hosts(text: str) -> str:
    """known_hosts whole (host names, or their hashes, and public keys: no secret), when
    every line is one: [@cert-authority|@revoked] hosts keytype base64 [comment]."""
    for n, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        if fields[0] in ("@cert-authority", "@revoked"):
            fields = fields[1:]
        if (len(fields) < 3 or not fields[1].startswith(("ssh-", "ecdsa-", "sk-"))
                or not _only(fields[1], _NAME + "@")
                or not _only(fields[2].rstrip("="), _ALNUM + "+/")):
            raise Unparsable(f"line {n}: not a known host")
    return text if text.endswith("\n") or not text else text + "\n"


# -- the private home ----------------------------------------------------------------------

def prepare(homes: list[str], own_home: str, environ: dict[str, str],
            env: dict[str, str], use_cache: bool = True) -> Shown:
    """Write the filtered copies of the configuration in the first of HOMES into
    OWN_HOME (fresh, ztsa's own): each file that exists and parses, if anything of it
    is kept. ENVIRON: the caller's (CARGO_HOME, XDG_CONFIG_HOME say where the real
    files are); ENV: the tree's (GIT_SSH_COMMAND, GIT_SSH: no core.sshCommand)."""
    if not homes:
        return Shown()
    home = homes[0]
    xdg = environ.get("XDG_CONFIG_HOME", "")
    xdg = xdg if os.path.isabs(xdg) else os.path.join(home, ".config")
    cargo_home = environ.get("CARGO_HOME", "")
    cargo_home = cargo_home if os.path.isabs(cargo_home) else os.path.join(home, ".cargo")
    cache: list[ParseCache | None] = []
    written: list[str] = []
    notes: list[str] = []

    def load(path: str) -> str | None:
        try:
            data = _read(path)
            return data.decode("utf-8").removeprefix("\ufeff") if data is not None else None
        except UnicodeDecodeError:
            notes.append(_note(path, "not UTF-8"))
        except Unparsable as exc:
            notes.append(_note(path, str(exc)))
        return None

    def toml(text: str, path: str) -> dict[str, Any]:
        if not cache:
            cache.append(_cache() if use_cache else None)
        return _load_toml(text, path, cache[0])

    def write(rel: str, content: str) -> str:
        path = os.path.join(own_home, rel)
        os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(content)
        written.append(path)
        return path

    def show(path: str, rel: str, make: Callable[[str, str], str]) -> str | None:
        text = load(path)
        if text is None:
            return None
        try:
            content = make(text, path)
        except Unparsable as exc:
            notes.append(_note(path, str(exc)))
            return None
        return write(rel, content) if content.strip() else None

    for name in ("config.toml", "config"):
        show(os.path.join(cargo_home, name), os.path.join(".cargo", name),
             lambda t, p: toml_text(cargo(toml(t, p), p)))
    show(os.path.join(home, ".npmrc"), ".npmrc", lambda t, _: npmrc(t, homes))
    show(os.path.join(xdg, "pip", "pip.conf"), ".config/pip/pip.conf", pip_conf)
    show(os.path.join(home, ".pip", "pip.conf"), ".pip/pip.conf", pip_conf)
    show(os.path.join(xdg, "uv", "uv.toml"), ".config/uv/uv.toml",
         lambda t, p: toml_text(uv(toml(t, p), p)))
    hosts = show(os.path.join(home, ".ssh", "known_hosts"), ".ssh/known_hosts",
                 lambda t, _: known_hosts(t))
    # ssh reads the hidden home's files: the copy of its config names the copy of
    # known_hosts, and git runs ssh with that copy
    ssh_conf = None
    ssh_text = load(os.path.join(home, ".ssh", "config"))
    if ssh_text is not None or hosts:
        try:
            content = ssh_config(ssh_text or "")
        except Unparsable as exc:
            notes.append(_note(os.path.join(home, ".ssh", "config"), str(exc)))
            content = ""
        if hosts and not any(c in hosts for c in '"%'):  # ssh expands % there
            content = f'UserKnownHostsFile "{hosts}"\n' + content
        if content.strip():
            ssh_conf = write(".ssh/config", content)
    entries: list[tuple[str, str, str]] = []
    # git's order: the XDG file, then ~/.gitconfig (a later value wins)
    for path in (os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")):
        text = load(path)
        try:
            entries += gitconfig(text, path) if text is not None else []
        except Unparsable as exc:
            notes.append(_note(path, str(exc)))
    if (ssh_conf and "GIT_SSH_COMMAND" not in env and "GIT_SSH" not in env
            and not any(c in ssh_conf for c in "'\"\\\n")):
        entries.append(("core", "sshCommand", f"ssh -F '{ssh_conf}'"))
    if entries:
        write(".config/git/config", git_text(entries))
        # `git config --global` then writes ~/.gitconfig (the identity's, if any), which
        # stays the tree's to change
        with contextlib.suppress(FileExistsError):
            os.close(os.open(os.path.join(own_home, ".gitconfig"),
                             os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    return Shown(tuple(written), tuple(notes))


def _note(path: str, why: str) -> str:
    from ztsa.printable import printable

    return (f"ztsa: {printable(path)} is not shown inside: ztsa cannot parse it "
            f"({printable(why)})")


def _cache() -> ParseCache | None:
    from ztsa.manifests.parsecache import ParseCache, cache_dir

    directory = cache_dir()
    return ParseCache(directory) if directory else None


def _load_toml(text: str, path: str, cache: ParseCache | None) -> dict[str, Any]:
    """The TOML document, through the parse cache when there is one."""
    from ztsa.manifests.parsecache import load_toml
    from ztsa.parsing import ParseError

    try:
        value = load_toml(cache, text, path)
    except ParseError as exc:
        raise Unparsable(exc.reason) from None
    if not isinstance(value, dict):
        raise Unparsable("not a TOML table")
    return value


def _read(path: str) -> bytes | None:
    """A regular file's bytes (through the person's links: a dotfiles manager's), None
    when there is none; Unparsable when it is larger than MAX_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_BYTES:
                raise Unparsable(f"larger than {MAX_BYTES >> 20} MiB")
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
