"""AGT011: catalogued settings that widen an agent's reach, redirect it or instruct it."""

from __future__ import annotations

import json

from ztsa.model import Status


def test_pass_narrow_settings(machine):
    machine.ws(".claude/settings.json", json.dumps({
        "permissions": {"additionalDirectories": ["shared", "docs"]},
        "env": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}}))
    machine.ws(".claude/skills/s/SKILL.md", "---\nname: s\nallowed-tools: Read Grep\n---\nx\n")
    machine.ws("CLAUDE.md", "Read @docs/guide.md; email me@example.com.\n")
    machine.ws(".gemini/settings.json", '{"tools": {"allowed": ["run_shell_command(ls)"]}}')
    assert machine.run("AGT011").status is Status.PASS


def test_fail_each_shape_with_its_setting_and_line(machine):
    machine.ws(".claude/settings.json",
               '{\n  "permissions": {\n    "additionalDirectories": ["~/.aws"]\n  }\n}\n')
    machine.ws("CLAUDE.md", "# x\n\nsee @~/.ssh/id_rsa\n")
    machine.ws(".cursor/cli.json", '{"permissions": {"allow": ["Shell(python3)"]}}')
    out = machine.run("AGT011")
    assert out.status is Status.FAIL
    got = {(e.detail.split(":")[0], e.path, e.line) for e in out.evidence}
    assert got == {("claude-additional-directories", ".claude/settings.json", 3),
                   ("claude-md-import", "CLAUDE.md", 3),
                   ("cursor-cli-permissions", ".cursor/cli.json", 1)}


def test_fail_credentials_are_never_shown(machine):
    machine.ws(".env", "GITHUB_TOKEN=ghp_" + "a1B2" * 9 + "\n")
    out = machine.run("AGT011")
    assert out.status is Status.FAIL
    assert "ghp_" not in out.evidence[0].detail and "GitHub" in out.evidence[0].detail


def test_fail_an_import_in_a_code_block_is_not_an_import(machine):
    machine.ws("CLAUDE.md", "```\n@~/.aws/credentials\n```\nand `@~/x` inline\n")
    assert machine.run("AGT011").status is Status.PASS


def test_unknown_when_front_matter_is_not_closed(machine):
    machine.ws(".claude/skills/s/SKILL.md", "---\nallowed-tools: Read\nx\n")
    out = machine.run("AGT011")
    assert out.status is Status.UNKNOWN and "SKILL.md" in out.message


def test_front_matter_read_as_leniently_as_the_agent_reads_it(machine):
    """An unquoted `description: a: b` is not YAML; Claude Code still reads the other
    keys, and so does the rule."""
    machine.ws(".claude/skills/s/SKILL.md",
               "---\ndescription: Use: when asked\nallowed-tools: [Read, Bash]\n---\nx\n")
    out = machine.run("AGT011")
    assert out.status is Status.FAIL and "grants 'Bash' whole" in out.evidence[0].detail
    machine.ws(".claude/skills/s/SKILL.md",
               "---\ndescription: Use: when asked\nallowed-tools: [Read, Grep]\n---\nx\n")
    assert machine.run("AGT011").status is Status.PASS


def test_unknown_when_the_marketplace_does_not_parse(machine):
    machine.ws(".claude-plugin/marketplace.json", "{plugins: ")
    assert machine.run("AGT011").status is Status.UNKNOWN


def test_imports_judged_from_the_importing_file(machine):
    """`@../x` from .claude/rules/ stays in the repository; from the top it leaves it;
    `@/components` is a bundler alias in prose, `@/etc/passwd` is the machine's."""
    machine.ws(".claude/rules/a.md", "see @../../README.md and @/components/Button\n")
    assert machine.run("AGT011").status is Status.PASS
    machine.ws("CLAUDE.md", "see @../secrets.md\n")
    out = machine.run("AGT011")
    assert out.status is Status.FAIL and "'@../secrets.md'" in out.evidence[0].detail
    machine.ws("CLAUDE.md", "see @/etc/passwd.\n")
    assert "'@/etc/passwd'" in machine.run("AGT011").evidence[0].detail


def test_development_defaults_in_dotenv_pass(machine):
    machine.ws(".env", "POSTGRES_PASSWORD=postgres\nSECRET_KEY=dev-secret-not-for-prod\n"
                       "API_KEY=${API_KEY}\n")
    assert machine.run("AGT011").status is Status.PASS
