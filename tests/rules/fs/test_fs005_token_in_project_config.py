from ztsa.model import Status

NPM_TOKEN = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_pass_placeholders(machine):
    machine.ws(".npmrc", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n")
    machine.ws("packages/web/.yarnrc.yml", 'npmAuthToken: "${NPM_TOKEN}"\n')
    machine.ws(".cargo/credentials.toml", '[registry]\ntoken = "${CARGO_TOKEN}"\n')
    assert machine.run("FS005").status is Status.PASS


def test_fail_names_file_and_line_never_value(machine):
    machine.ws(".npmrc", f"registry=https://registry.npmjs.org/\n//r/:_authToken={NPM_TOKEN}\n")
    machine.ws("packages/api/.pypirc", "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlw\n")
    machine.ws(".cargo/credentials.toml", '[registry]\ntoken = "cio1234567890"\n')
    machine.ws("node_modules/x/.npmrc", f"_authToken={NPM_TOKEN}\n")  # skipped
    out = machine.run("FS005")
    assert out.status is Status.FAIL
    assert {(e.path, e.line) for e in out.evidence} == {
        (".npmrc", 2), ("packages/api/.pypirc", 3), (".cargo/credentials.toml", 2)}
    assert NPM_TOKEN not in str(out) and "pypi-AgEIcHlw" not in str(out)


def test_unknown_symlink_outside(machine):
    import os
    os.symlink("/etc/hostname", machine.workspace / ".npmrc")
    out = machine.run("FS005")
    assert out.status is Status.UNKNOWN and "outside the workspace" in out.message


def test_fail_secrets_in_mcp_server_configuration(machine):
    import json

    machine.ws(".mcp.json", json.dumps({"mcpServers": {
        "gh": {"command": "npx", "args": ["-y", "gh-mcp"],
               "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_" + "a1B2" * 9}},
        "api": {"type": "http", "url": "https://x.example/mcp",
                "headers": {"Authorization": "Bearer 9f8e7d6c5b4a39281706f5e4"}},
        "ok": {"command": "srv", "env": {"API_KEY": "${API_KEY}", "TOKEN": "your-token-here",
                                         "LOG_LEVEL": "debug"}}}}, indent=2))
    machine.ws(".codex/config.toml", '[mcp_servers.db]\ncommand = "db-mcp"\n'
               'env = { DB_PASSWORD = "s3cr3tPassw0rd42" }\n')
    out = machine.run("FS005")
    assert out.status is Status.FAIL
    assert sorted((e.path, e.detail.split(" in MCP")[0]) for e in out.evidence) == [
        (".codex/config.toml", "a literal DB_PASSWORD"),
        (".mcp.json", "GitHub token"),
        (".mcp.json", "a literal Authorization")]
    assert "ghp_" not in " ".join(e.detail for e in out.evidence)


def test_fail_secrets_in_the_other_agents_mcp_files(machine):
    """Roo Code's, Kiro's and Amazon Q's mcp.json and VS Code's `mcp` setting hold
    servers the same way."""
    import json

    token = "ghp_" + "a1B2" * 9
    server = {"command": "npx", "args": ["-y", "gh-mcp"],
              "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": token}}
    machine.ws(".roo/mcp.json", json.dumps({"mcpServers": {"gh": server}}))
    machine.ws(".kiro/settings/mcp.json", json.dumps({"mcpServers": {"gh": server}}))
    machine.ws(".amazonq/mcp.json", json.dumps({"mcpServers": {"gh": server}}))
    machine.ws(".vscode/settings.json", json.dumps({"editor.tabSize": 2,
                                                    "mcp": {"servers": {"gh": server}}}))
    out = machine.run("FS005")
    assert out.status is Status.FAIL
    assert sorted(e.path for e in out.evidence) == [
        ".amazonq/mcp.json", ".kiro/settings/mcp.json", ".roo/mcp.json",
        ".vscode/settings.json"]
    assert token not in " ".join(e.detail for e in out.evidence)
    out = machine.run("AGT003")
    assert out.status is Status.FAIL and len(out.evidence) == 4, out


def test_pass_mcp_placeholders_and_examples(machine):
    import json

    machine.ws(".vscode/mcp.json", json.dumps({"servers": {"x": {
        "command": "srv", "env": {"API_TOKEN": "${input:token}", "SECRET": "$SECRET",
                                  "KEY": "<your api key>"},
        "headers": {"Authorization": "Bearer ${env:TOKEN}"}}}}))
    assert machine.run("FS005").status is Status.PASS
