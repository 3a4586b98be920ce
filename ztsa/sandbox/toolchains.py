"""What a toolchain installed under the real home needs when CMD's HOME is a private
one: its root, shown read-only, and the variable that names it; and the caller's git
identity (user.name and user.email, nothing else of the caller's git config)."""

from __future__ import annotations

import os

# a toolchain's root under the home, and the variable its tools find it by; a PATH
# entry beneath the root (or, for rustup, its proxies in ~/.cargo/bin) brings both.
# None of these roots holds credentials (~/.cargo does: only its bin is shown, as a
# PATH entry)
ROOTS = (
    (".pyenv", "PYENV_ROOT", ()),
    (".rustup", "RUSTUP_HOME", (".cargo/bin",)),
    (".nvm", "NVM_DIR", ()),
    (".volta", "VOLTA_HOME", ()),
    (".bun", "BUN_INSTALL", ()),
    (".sdkman", "SDKMAN_DIR", ()),
    (".local/share/fnm", "FNM_DIR", ()),
)


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def variables(environ: dict[str, str], homes: list[str]) -> dict[str, str]:
    """The toolchain variables CMD gets: the caller's own value when it has one, else
    the root under a home when PATH leads there (plan.home_view shows each read-only,
    being an absolute path CMD's environment names)."""
    path = [os.path.realpath(p) for p in environ.get("PATH", "").split(":") if p]
    out: dict[str, str] = {}
    for rel, name, via in ROOTS:
        if name in environ:
            if os.path.isabs(environ[name]):
                out[name] = environ[name]
            continue
        for home in homes:
            root = os.path.realpath(os.path.join(home, rel))
            entries = [root, *(os.path.realpath(os.path.join(home, v)) for v in via)]
            if os.path.isdir(root) and any(_inside(p, e) for p in path for e in entries):
                out[name] = root
                break
    return out


def git_identity(homes: list[str], environ: dict[str, str]) -> str | None:
    """A .gitconfig holding the caller's user.name and user.email (from ~/.gitconfig
    and $XDG_CONFIG_HOME/git/config; includes not followed), or None without one."""
    from ztsa.gitlayout import read_small
    from ztsa.parsing import ParseError, parse_git_config

    found: dict[str, str] = {}
    for home in homes:
        xdg = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        for path in (os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")):
            data = read_small(path)
            if data is None:
                continue
            try:
                entries = parse_git_config(data.decode("utf-8", "replace"), path)
            except ParseError:
                continue
            for section, key, value, _ in entries:
                if section == "user" and key in ("name", "email") and value:
                    found[key] = value  # later files win, as in git
        if found:
            break
    if not found:
        return None

    def quote(v: str) -> str:
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'

    return "[user]\n" + "".join(f"\t{k} = {quote(v)}\n" for k, v in sorted(found.items()))
