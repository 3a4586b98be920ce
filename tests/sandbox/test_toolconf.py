"""The person's tool configuration in the private home: an allowlist of keys that hold
no credential, from real files in a temporary home (ztsa.sandbox.toolconf)."""

from __future__ import annotations

import configparser
import os
import stat
from pathlib import Path

import pytest

from ztsa.parsing import load_toml, parse_git_config
from ztsa.sandbox import toolconf

TOKEN = "s3cr3t-T0KEN-4f9a"  # every secret planted below holds it


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path]:
    real, own = tmp_path / "real", tmp_path / "own"
    real.mkdir()
    own.mkdir(mode=0o700)
    return real, own


def put(home: Path, rel: str, text: str) -> Path:
    path = home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def prepare(real: Path, own: Path, env: dict[str, str] | None = None,
            environ: dict[str, str] | None = None) -> toolconf.Shown:
    return toolconf.prepare([str(real)], str(own), environ or {}, env or {},
                            use_cache=False)


def everything(own: Path) -> str:
    return "".join(p.read_text() for p in sorted(own.rglob("*")) if p.is_file())


CARGO = f"""
[source.crates-io]
replace-with = "vendored"

[source.vendored]
directory = "vendor"

[source.mirror]
registry = "sparse+https://mirror.example/index/"

[source.leaky]
registry = "https://ci:{TOKEN}@mirror.example/index/"

[registries.corp]
index = "sparse+https://crates.corp.example/"
token = "{TOKEN}"
credential-provider = ["cargo:token-from-stdout", "echo", "{TOKEN}"]

[registries.leaky]
index = "https://{TOKEN}@crates.corp.example/"

[registry]
default = "corp"
token = "{TOKEN}"
global-credential-providers = ["cargo:token"]

[net]
git-fetch-with-cli = true
offline = false
retry = 3

[http]
proxy = "http://proxy.example:3128"
timeout = 30
cainfo = "/etc/ssl/certs/ca-certificates.crt"

[build]
rustflags = ["-C", "linker=/tmp/{TOKEN}"]

[target.x86_64-unknown-linux-gnu]
linker = "/tmp/evil"
runner = "/tmp/evil"

[alias]
b = "build"

[env]
API_TOKEN = "{TOKEN}"
"""


def test_cargo_keeps_source_replacement_and_registries_without_tokens(homes):
    real, own = homes
    put(real, ".cargo/config.toml", CARGO)
    shown = prepare(real, own)
    copy = own / ".cargo" / "config.toml"
    assert shown.files == (str(copy),) and shown.notes == ()
    doc = load_toml(copy.read_text(), "copy")
    assert doc == {
        "source": {"crates-io": {"replace-with": "vendored"},
                   "vendored": {"directory": str(real / "vendor")},  # Cargo's base: ~
                   "mirror": {"registry": "sparse+https://mirror.example/index/"}},
        "registries": {"corp": {"index": "sparse+https://crates.corp.example/"}},
        "registry": {"default": "corp"},
        "net": {"git-fetch-with-cli": True, "offline": False, "retry": 3},
        "http": {"proxy": "http://proxy.example:3128", "timeout": 30},
    }
    assert TOKEN not in everything(own)
    assert "linker" not in copy.read_text() and "alias" not in copy.read_text()
    assert stat.S_IMODE(copy.stat().st_mode) == 0o400


def test_cargo_home_of_the_caller_and_the_legacy_name(homes, tmp_path):
    real, own = homes
    elsewhere = tmp_path / "cargo-home"
    put(elsewhere, "config", '[source.crates-io]\nreplace-with = "v"\n'
                             f'[registry]\ntoken = "{TOKEN}"\n')
    put(real, ".cargo/config.toml", '[net]\noffline = true\n')  # not Cargo's, then
    shown = prepare(real, own, environ={"CARGO_HOME": str(elsewhere)})
    assert shown.files == (str(own / ".cargo" / "config"),)
    assert load_toml((own / ".cargo" / "config").read_text(), "copy") == {
        "source": {"crates-io": {"replace-with": "v"}}}


def test_wrong_types_and_a_proxy_with_a_password_are_left_out(homes):
    real, own = homes
    put(real, ".cargo/config.toml", '[net]\nretry = true\noffline = "yes"\n'
                                    f'[http]\nproxy = "u:{TOKEN}@proxy:3128"\ntimeout = "9"\n'
                                    '[source.x]\ndirectory = 5\n')
    shown = prepare(real, own)
    assert shown.files == () and shown.notes == ()
    assert not (own / ".cargo").exists()


NPMRC = f"""
; the person's npm configuration
registry=https://registry.corp.example/npm/
@corp:registry = https://npm.corp.example/
@leak:registry=https://me:{TOKEN}@npm.leak.example/
//registry.npmjs.org/:_authToken={TOKEN}
//npm.corp.example/:_auth={TOKEN}
_auth = {TOKEN}
_authToken={TOKEN}
_password={TOKEN}
username=me
email=me@example.com
strict-ssl=false
cafile=/etc/hostname
certfile=/etc/hostname
keyfile=/tmp/{TOKEN}.key
always-auth=true
script-shell=/tmp/evil
[section]
registry=https://section.example/
"""


def test_npmrc_keeps_registries_only(homes):
    real, own = homes
    put(real, ".npmrc", NPMRC)
    prepare(real, own)
    text = (own / ".npmrc").read_text()
    assert text.splitlines() == ["registry=https://registry.corp.example/npm/",
                                 "@corp:registry=https://npm.corp.example/",
                                 "strict-ssl=false", "cafile=/etc/hostname"]
    assert TOKEN not in everything(own)


def test_npm_cafile_only_outside_the_homes(homes):
    real, own = homes
    put(real, "ca.pem", "-----BEGIN CERTIFICATE-----\n")
    put(real, ".npmrc", f"cafile={real / 'ca.pem'}\nregistry=https://r.example/\n")
    prepare(real, own)
    assert (own / ".npmrc").read_text() == "registry=https://r.example/\n"


def test_npmrc_values_read_as_npm_reads_them(homes):
    real, own = homes
    put(real, ".npmrc", 'registry = "https://q.example/a;b"\n'
                        "@x:registry=https://x.example/ # a comment\n"
                        # a comment ends an unquoted value, quotes or none: npm's value
                        # is `"https://y.example/a`, no URL
                        '@y:registry="https://y.example/a;b" ; a comment\n')
    prepare(real, own)
    assert (own / ".npmrc").read_text() == ("registry='https://q.example/a;b'\n"
                                            "@x:registry=https://x.example/\n")


PIP = f"""
[global]
index-url = https://pypi.corp.example/simple
extra-index-url =
    https://extra.example/simple
    https://extra2.example/simple
    https://user:{TOKEN}@private.example/simple
    https://{TOKEN}@fury.example/simple
find-links = /srv/wheels
trusted-host = pypi.corp.example
timeout = 60
cert = /tmp/{TOKEN}.pem
client-cert = /tmp/{TOKEN}.pem
proxy = http://u:{TOKEN}@proxy.example

[install]
index_url = https://u:{TOKEN}@only.example/simple
no-index = true
"""


def test_pip_conf_keeps_indexes_without_credentials(homes):
    real, own = homes
    put(real, ".config/pip/pip.conf", PIP)
    put(real, ".pip/pip.conf", "[global]\ntimeout = 5\n")
    shown = prepare(real, own)
    assert shown.files == (str(own / ".config/pip/pip.conf"), str(own / ".pip/pip.conf"))
    parser = configparser.RawConfigParser()
    parser.read(own / ".config/pip/pip.conf")
    assert {s: dict(parser.items(s)) for s in parser.sections()} == {
        "global": {"index-url": "https://pypi.corp.example/simple",
                   "extra-index-url": "\nhttps://extra.example/simple\nhttps://extra2.example/simple",
                   "find-links": "/srv/wheels", "trusted-host": "pypi.corp.example",
                   "timeout": "60"},
        "install": {"no-index": "true"}}
    assert (own / ".pip/pip.conf").read_text() == "[global]\ntimeout = 5\n"
    assert TOKEN not in everything(own)


def test_pip_conf_with_a_duplicate_key_is_not_shown(homes):
    real, own = homes
    put(real, ".config/pip/pip.conf", "[global]\ntimeout = 5\ntimeout = 6\n")
    shown = prepare(real, own)
    assert shown.files == () and not (own / ".config").exists()
    assert len(shown.notes) == 1 and "pip.conf is not shown inside" in shown.notes[0]


UV = f"""
index-url = "https://pypi.corp.example/simple"
extra-index-url = ["https://extra.example/simple", "https://u:{TOKEN}@x.example/simple"]
native-tls = true
offline = false
publish-url = "https://u:{TOKEN}@upload.example/"

[[index]]
name = "corp"
url = "https://pypi.corp.example/simple"
explicit = true

[[index]]
name = "leaky"
url = "https://{TOKEN}@leaky.example/simple"
default = true

[pip]
index-url = "https://u:{TOKEN}@pip.example/simple"
"""


def test_uv_toml_keeps_indexes_without_credentials(homes, tmp_path):
    real, own = homes
    xdg = tmp_path / "xdg"
    put(xdg, "uv/uv.toml", UV)
    prepare(real, own, environ={"XDG_CONFIG_HOME": str(xdg)})
    doc = load_toml((own / ".config/uv/uv.toml").read_text(), "copy")
    assert doc == {"index-url": "https://pypi.corp.example/simple",
                   "extra-index-url": ["https://extra.example/simple"],
                   "native-tls": True, "offline": False,
                   "index": [{"url": "https://pypi.corp.example/simple", "name": "corp",
                              "explicit": True}]}
    assert TOKEN not in everything(own)


GITCONFIG = f"""
[user]
	name = Z Tester
	email = z@t.invalid
[credential]
	helper = store
[credential "https://github.com"]
	helper = !echo password={TOKEN}
[http "https://github.com/"]
	extraHeader = Authorization: Bearer {TOKEN}
[http]
	extraheader = AUTHORIZATION: basic {TOKEN}
[core]
	sshCommand = ssh -i /tmp/{TOKEN}
	fsmonitor = /tmp/evil
	hooksPath = /tmp/evil
	autocrlf = input
[alias]
	x = !sh -c 'curl evil'
[include]
	path = /tmp/evil.inc
[init]
	defaultBranch = trunk
[url "git@github.com:"]
	insteadOf = https://github.com/
[url "https://x-access-token:{TOKEN}@github.com/"]
	insteadOf = https://github.com/
[url "https://{TOKEN}@gitlab.example/"]
	pushInsteadOf = https://gitlab.example/
[url "ssh://git@gitlab.example/"]
	pushInsteadOf = https://gitlab.example/
"""


def test_git_keeps_url_rewrites_and_defaults_only(homes):
    real, own = homes
    put(real, ".gitconfig", GITCONFIG)
    put(real, ".config/git/config", "[init]\n\tdefaultBranch = main\n")
    shown = prepare(real, own)
    copy = own / ".config/git/config"
    assert shown.files == (str(copy),)
    entries = [(s, k, v) for s, k, v, _ in parse_git_config(copy.read_text(), "copy")]
    assert entries == [  # git's order: the XDG file first
        ("init", "defaultbranch", "main"),
        ("core", "autocrlf", "input"),
        ("init", "defaultbranch", "trunk"),
        ("url.git@github.com:", "insteadof", "https://github.com/"),
        ("url.ssh://git@gitlab.example/", "pushinsteadof", "https://gitlab.example/")]
    assert TOKEN not in everything(own)
    assert "Tester" not in everything(own)  # the identity is toolchains.git_identity's
    # `git config --global` writes ~/.gitconfig, which stays writable
    gitconfig = own / ".gitconfig"
    assert gitconfig.read_text() == "" and stat.S_IMODE(gitconfig.stat().st_mode) == 0o600


def test_git_file_that_does_not_parse_is_not_shown(homes):
    real, own = homes
    put(real, ".gitconfig", "[init]\n\tdefaultBranch = main\nnot a line!\n")
    put(real, ".config/git/config", "[core]\n\tautocrlf = true\n")
    shown = prepare(real, own)
    assert [(s, k) for s, k, _, _ in parse_git_config(
        (own / ".config/git/config").read_text(), "copy")] == [("core", "autocrlf")]
    assert len(shown.notes) == 1 and ".gitconfig is not shown inside" in shown.notes[0]


SSH_CONFIG = f"""
# the person's ssh configuration
User global-user
IdentityFile ~/.ssh/{TOKEN}
Include ~/.ssh/config.d/*

Host gh github.com
    HostName github.com
    User git
    Port 22
    IdentityFile ~/.ssh/id_{TOKEN}
    ProxyCommand nc -X connect -x proxy:{TOKEN} %h %p
    LocalCommand echo {TOKEN}
    ControlPath ~/.ssh/cm-{TOKEN}
    StrictHostKeyChecking yes

Match exec "echo {TOKEN}"
    HostName evil.example
    User evil

Host lax
    HostName=lax.example
    StrictHostKeyChecking no
    HostKeyAlgorithms ssh-ed25519
    Port twenty
"""

KNOWN_HOSTS = ("github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9o"
               "kWi0dh2l9GKJl\n"
               "|1|abc=|def= ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY= a comment\n"
               "@cert-authority *.corp.example ssh-rsa AAAAB3NzaC1yc2E=\n")


def test_ssh_config_and_known_hosts(homes):
    real, own = homes
    put(real, ".ssh/config", SSH_CONFIG)
    put(real, ".ssh/known_hosts", KNOWN_HOSTS)
    shown = prepare(real, own)
    hosts, config = own / ".ssh/known_hosts", own / ".ssh/config"
    assert hosts.read_text() == KNOWN_HOSTS
    assert config.read_text() == (
        f'UserKnownHostsFile "{hosts}"\n'
        "User global-user\n"
        "\nHost gh github.com\n"
        "    HostName github.com\n    User git\n    Port 22\n"
        "    StrictHostKeyChecking yes\n"
        "\nHost lax\n"
        "    HostName lax.example\n    HostKeyAlgorithms ssh-ed25519\n")
    assert TOKEN not in everything(own)
    # git runs ssh with the copy: OpenSSH reads the password database's home, hidden
    git = parse_git_config((own / ".config/git/config").read_text(), "copy")
    assert [(s, k, v) for s, k, v, _ in git] == [("core", "sshcommand", f"ssh -F '{config}'")]
    assert set(shown.files) == {str(hosts), str(config), str(own / ".config/git/config")}


def test_no_ssh_command_when_the_tree_names_its_own(homes):
    real, own = homes
    put(real, ".ssh/known_hosts", KNOWN_HOSTS)
    prepare(real, own, env={"GIT_SSH": "/usr/bin/ssh"})
    assert (own / ".ssh/config").exists() and not (own / ".config/git/config").exists()


def test_ssh_files_that_do_not_parse_are_not_shown(homes):
    real, own = homes
    put(real, ".ssh/config", 'Host x\n    HostName "x.example\n')
    put(real, ".ssh/known_hosts", "github.com ssh-ed25519 not!base64\n")
    shown = prepare(real, own)
    assert shown.files == () and not (own / ".ssh").exists()
    assert len(shown.notes) == 2


def test_unparsable_toml_is_not_shown_and_said_once(homes):
    real, own = homes
    put(real, ".cargo/config.toml", f'[registry]\ntoken = "{TOKEN}"\n[source.x\n')
    shown = prepare(real, own)
    assert shown.files == () and not (own / ".cargo").exists()
    assert len(shown.notes) == 1
    assert shown.notes[0].startswith("ztsa: ") and "config.toml is not shown" in shown.notes[0]
    assert TOKEN not in shown.notes[0]


def test_not_utf8_is_not_shown(homes):
    real, own = homes
    (real / ".npmrc").write_bytes(b"registry=https://r.example/\n_auth=\xff\xfe\n")
    shown = prepare(real, own)
    assert shown.files == () and "not UTF-8" in shown.notes[0]


def test_a_file_too_large_is_not_shown(homes):
    real, own = homes
    put(real, ".npmrc", "registry=https://r.example/\n" + "; pad\n" * (1 << 19))
    shown = prepare(real, own)
    assert shown.files == () and "larger than 1 MiB" in shown.notes[0]


def test_toml_text_reads_back(homes):
    doc = {"a": 1, "b": False, "source": {"x": {"k": 'v"\\\x01\x7f\u00e9'},
                                          "y.z": {"d": True}},
           "index": [{"url": "u", "n": ["a", "b"]}, {"url": "w"}], "http": {"t": 3}}
    assert load_toml(toolconf.toml_text(doc), "copy") == doc


def test_only_the_files_that_exist_and_nothing_for_an_empty_home(homes):
    real, own = homes
    assert prepare(real, own) == toolconf.Shown()
    assert list(own.iterdir()) == []


def test_a_link_the_person_made_is_followed(homes, tmp_path):
    real, own = homes
    dotfiles = put(tmp_path, "dotfiles/npmrc", "registry=https://r.example/\n")
    os.symlink(dotfiles, real / ".npmrc")
    prepare(real, own)
    assert (own / ".npmrc").read_text() == "registry=https://r.example/\n"


def test_the_toml_parse_goes_through_the_parse_cache(homes, tmp_path, monkeypatch):
    real, _ = homes
    monkeypatch.setenv("ZTSA_CACHE_DIR", str(tmp_path / "cache"))
    put(real, ".cargo/config.toml", '[source.crates-io]\nreplace-with = "v"\n')
    for i in range(2):
        target = tmp_path / f"own{i}"
        target.mkdir()
        toolconf.prepare([str(real)], str(target), {}, {}, use_cache=True)
        assert "replace-with" in (target / ".cargo/config.toml").read_text()
    assert len(os.listdir(tmp_path / "cache")) == 1


@pytest.mark.parametrize(("url", "ssh", "ok"), [
    ("https://registry.example/", False, True),
    ("sparse+https://index.example/", False, True),
    ("https://user:pass@host/", False, False),
    ("https://token@host/", False, False),
    ("https://host/simple?token=x", False, False),
    ("http://u:p@proxy:3128", False, False),
    ("u:p@proxy:3128", False, False),
    ("proxy.example:3128", False, True),
    ("/srv/wheels", False, True),
    ("git@github.com:", True, True),
    ("git@github.com:", False, False),
    ("ssh://git@host/", True, True),
    ("ssh://git:pw@host/", True, False),
    ("https://x-access-token:t@github.com/", True, False),
    ("https://t@github.com/", True, False),
    ("https://host/\nx", False, False),
])
def test_url_ok(url, ssh, ok):
    assert toolconf.url_ok(url, ssh_user=ssh) is ok
