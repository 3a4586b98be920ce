"""Network presets: `--allow-net @NAME` (and `"@NAME"` in a policy's `net.allow` or
`net.deny`) for the hosts an ecosystem's package tool reaches with its default
configuration, on port 443 (HTTPS) only.

The table is data: each host with the reason it is there, checked against the tool's
documented default. It stays minimal: no wildcard, and no host the default
configuration does not reach (a mirror, a private registry, a tool's telemetry).
A preset expands where rules are parsed (the command line's flags in
ztsa.tiers.merge_exec, a policy file's entries in ztsa.tiers.parse): what follows
sees only its hosts, as if each had been written out. `ztsa policy presets` prints
the table; docs/policy.md and the README list it (tests/test_presets.py compares).
"""

from __future__ import annotations

from ztsa.records import NamedTuple

PORT = 443  # every preset host: HTTPS only


class Host(NamedTuple):
    name: str
    why: str  # what the tool fetches there, and where that default is documented


class Preset(NamedTuple):
    name: str  # without the @
    description: str
    hosts: tuple[Host, ...]
    note: str = ""  # what the preset deliberately leaves out

    @property
    def specs(self) -> tuple[str, ...]:
        """Its hosts as --allow-net specs."""
        return tuple(f"{h.name}:{PORT}" for h in self.hosts)


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("npm", "the npm registry (npm, pnpm, Bun)", (
        Host("registry.npmjs.org", "package metadata and tarballs: npm's default `registry` "
                                   "(https://registry.npmjs.org/)"),
    ), note="Yarn's default registry.yarnpkg.com, another name of the same registry: add "
            "it, or point Yarn at registry.npmjs.org"),
    Preset("pypi", "the Python Package Index (pip, uv, Poetry)", (
        Host("pypi.org", "the index: pip's default --index-url https://pypi.org/simple"),
        Host("files.pythonhosted.org", "the distribution files (wheels, sdists) the "
                                       "index links to"),
    )),
    Preset("crates", "crates.io (cargo)", (
        Host("index.crates.io", "the sparse index: cargo's default registry since 1.70 "
                                "(sparse+https://index.crates.io/)"),
        Host("static.crates.io", "the .crate files: the index's config.json `dl` since "
                                 "March 2024"),
        Host("crates.io", "the web API (the index's `api`: publish, yank, search, login), "
                          "and the `dl` of older index configurations, which redirects to "
                          "static.crates.io"),
    )),
    Preset("go", "the Go module mirror and checksum database (go)", (
        Host("proxy.golang.org", "modules and toolchains: GOPROXY's default "
                                 "https://proxy.golang.org,direct (go.env)"),
        Host("sum.golang.org", "the checksum database: GOSUMDB's default sum.golang.org"),
    ), note="GOPROXY's `direct` fallback, which fetches from each module's own VCS host: "
            "add @github or that host"),
    Preset("rubygems", "RubyGems.org (gem, Bundler)", (
        Host("rubygems.org", "the default source (https://rubygems.org/): gem downloads, "
                             "specs and the API"),
        Host("index.rubygems.org", "the compact index (/versions, /info/NAME): Bundler and "
                                   "RubyGems fetch it here for a rubygems.org source"),
    )),
    Preset("maven", "Maven Central (Maven, Gradle, sbt, Coursier)", (
        Host("repo.maven.apache.org", "Central's canonical URL, the Maven super POM's "
                                      "`central` (https://repo.maven.apache.org/maven2); "
                                      "Gradle's mavenCentral()"),
        Host("repo1.maven.org", "the same repository by its other name, which sbt, "
                                "Coursier and older builds use "
                                "(https://repo1.maven.org/maven2)"),
    )),
    Preset("github", "GitHub over HTTPS (git clone, the API, archives, release assets, "
                     "raw files)", (
        Host("github.com", "git over HTTPS, and the web URLs of archives and release "
                           "downloads (which redirect below)"),
        Host("api.github.com", "the REST and GraphQL API (gh, tools' release lookups)"),
        Host("codeload.github.com", "source archives: /archive/REF.tar.gz redirects here"),
        Host("objects.githubusercontent.com", "release assets, as their downloads "
                                              "redirected until 2025 (older links and "
                                              "clients)"),
        Host("release-assets.githubusercontent.com", "release assets: where their "
                                                     "downloads redirect since 2025"),
        Host("raw.githubusercontent.com", "raw files (raw.githubusercontent.com/OWNER/"
                                          "REPO/REF/PATH)"),
    ), note="git over SSH, port 22: name github.com:22 for it"),
)}


class UnknownPreset(ValueError):
    """An @NAME that is no preset (exit 2): the message names the known ones."""


def known() -> str:
    return ", ".join(f"@{n}" for n in PRESETS)


def is_preset(spec: str) -> bool:
    """Is SPEC written as a preset (@NAME)? (An --allow-unix @NAME is another thing.)"""
    return spec.strip().startswith("@")


def get(spec: str) -> Preset:
    name = spec.strip()[1:].lower()
    if name not in PRESETS:
        raise UnknownPreset(f"{spec!r} is not a network preset (known: {known()}; "
                            "`ztsa policy presets` lists their hosts)")
    return PRESETS[name]


def expand(spec: str) -> tuple[str, ...]:
    """The --allow-net specs SPEC stands for: a preset's hosts on port 443, or SPEC
    itself. UnknownPreset for an @NAME that is none."""
    return get(spec).specs if is_preset(spec) else (spec,)


def of_host(name: str) -> list[Preset]:
    """The presets that name this host."""
    name = name.lower().rstrip(".")
    return [p for p in PRESETS.values() if any(h.name == name for h in p.hosts)]


def render_text() -> str:
    """`ztsa policy presets`: each preset, its hosts and why each is there."""
    out = []
    for p in PRESETS.values():
        out.append(f"@{p.name}: {p.description}")
        width = max(len(h.name) for h in p.hosts) + len(f":{PORT}")
        for h in p.hosts:
            out.append(f"  {h.name + ':' + str(PORT):<{width}}  {h.why}")
        if p.note:
            out.append(f"  (not included: {p.note})")
    return "\n".join(out) + "\n"


def render_json() -> list[dict[str, object]]:
    return [{"name": f"@{p.name}", "description": p.description, "port": PORT,
             "hosts": [{"name": h.name, "why": h.why} for h in p.hosts],
             **({"note": p.note} if p.note else {})} for p in PRESETS.values()]


def render_markdown() -> str:
    """The table docs/policy.md holds (tests/test_presets.py checks it is this)."""
    out = ["| preset | for | hosts (port 443 only) | not included |", "|---|---|---|---|"]
    for p in PRESETS.values():
        hosts = ", ".join(f"`{h.name}`" for h in p.hosts)
        out.append(f"| `@{p.name}` | {p.description} | {hosts} | {p.note} |".replace(
            " |  |", " | |"))
    return "\n".join(out) + "\n"


def render_summary(indent: str = "  ", width: int = 88) -> str:
    """The lines the README's --allow-net description holds (tests/test_presets.py
    checks it is this)."""
    import textwrap

    text = "; ".join(f"`@{p.name}` ({', '.join(h.name for h in p.hosts)})"
                     for p in PRESETS.values()) + "."
    return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) + "\n"
