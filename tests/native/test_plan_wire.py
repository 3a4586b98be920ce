"""The plan on the wire (native/planwire.c): what ztsa_spawn writes on ztsa-ns's memfd
and ztsa-ns decodes. Every plan of the golden cases (tests/sandbox/test_plan_golden.py,
real plan.make answers: homes, names, secrets, the audit view, a second ruleset) with a
full allow table encodes, decodes and encodes again to the same bytes, so the decoder
reads back every field the encoder wrote. Then what no plan is: every truncation, a
changed magic, another version, a length past the end, a byte after the last field, a
count that disagrees with the plan's, a string with a NUL; and hypothesis's random
mutations: each is refused (EINVAL, EPROTO) or decodes into a plan that encodes to
itself, never a crash."""

from __future__ import annotations

import errno
import importlib.util
import os
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ztsa.sandbox import native as nat
from ztsa.sandbox import plan

EXAMPLES = int(os.environ.get("ZTSA_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
HEAD = 12  # "ZTSAPLAN" and the version


def _golden():
    path = Path(__file__).resolve().parents[1] / "sandbox" / "test_plan_golden.py"
    spec = importlib.util.spec_from_file_location("ztsa_golden_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GOLDEN = _golden()


def allow_table(workspace: str) -> nat.AllowTable:
    return nat.AllowTable([(4, 0x7F000001, 0xFFFFFFFF, 80, 0), (6, 1, (1 << 128) - 1, 0, 1)],
                          ["/run/app.sock", "@abstract"], workspace,
                          programs={1: ("/usr/bin/git", "/usr/bin/ssh"), 3: ()})


@pytest.fixture
def plans(tmp_path) -> list[tuple[str, bytes]]:
    tree = GOLDEN.Tree(tmp_path)
    out = []
    for name, (req, offer, site) in GOLDEN.cases(tree).items():
        try:
            run = plan.make(req, offer, site)
        except plan.Refusal:
            continue
        out.append((name, nat.plan_bytes(run, allow_table(run.workspace))))
    assert len(out) >= 15
    return out


def refused(data: bytes) -> int:
    with pytest.raises(nat.NativeError) as no:
        nat.plan_reencode(data)
    return no.value.errno


def test_every_golden_plan_reads_back_as_written(plans):
    for name, data in plans:
        assert data[:8] == b"ZTSAPLAN", name
        assert nat.plan_reencode(data) == data, name


def test_the_encoding_carries_the_plan(plans, tmp_path):
    """Not an empty shell that reads back as itself: CMD, its environment, a secret's
    value and the allow table's programs are in the bytes."""
    data = dict(plans)["root_quiet_limits"]
    assert b"--flag" in data and b"LANG=C.UTF-8" in data and b"s3cret" in data
    assert b"/usr/bin/git\0/usr/bin/ssh\0\0" in data and b"@abstract" in data


def test_every_truncation_is_refused(plans):
    _, data = plans[0]
    for n in range(len(data)):
        assert refused(data[:n]) == errno.EINVAL, n


def test_a_byte_after_the_last_field_is_refused(plans):
    for _, data in plans:
        assert refused(data + b"\0") == errno.EINVAL


def test_magic_and_version(plans):
    _, data = plans[0]
    assert refused(b"ZTSAPLAX" + data[8:]) == errno.EINVAL
    version = struct.unpack_from("<I", data, 8)[0]
    other = data[:8] + struct.pack("<I", version + 1) + data[HEAD:]
    assert refused(other) == errno.EPROTO


def test_a_length_past_the_end_is_refused(plans):
    """The first item (CMD's path) claims more bytes than there are."""
    _, data = plans[0]
    for length in (len(data), 0x7FFFFFFF, 0xFFFFFFFE):
        assert refused(data[:HEAD] + struct.pack("<I", length) + data[HEAD + 4:]) == errno.EINVAL


def test_a_nul_inside_a_string_is_refused(plans):
    _, data = plans[0]
    (n,) = struct.unpack_from("<I", data, HEAD)
    assert n > 1
    bad = bytearray(data)
    bad[HEAD + 4 + n // 2] = 0
    assert refused(bytes(bad)) == errno.EINVAL


def test_a_count_that_disagrees_with_the_plan_is_refused(tmp_path):
    """argv's count says 3, its array's header 2: the decoder trusts neither alone."""
    run = minimal(tmp_path, ("a", "b"))
    data = nat.plan_bytes(run, allow_table(str(tmp_path)))
    count = struct.pack("<I", 8) + struct.pack("<q", 2)
    at = data.index(count)  # argv's count, then its header with the same count
    assert data[at + 12:at + 24] == count
    bad = data[:at + 4] + struct.pack("<q", 3) + data[at + 12:]
    assert refused(bad) == errno.EINVAL
    assert nat.plan_reencode(data) == data


def test_a_filter_longer_than_the_kernel_takes_is_refused(tmp_path):
    run = minimal(tmp_path, ("a",))._replace(filter=ALLOW_ALL * 4097)
    data = nat.plan_bytes(run, allow_table(str(tmp_path)))
    assert refused(data) == errno.EINVAL


@pytest.mark.parametrize("change", [{"namespaces": 3}, {"namespaces": -1},
                                    {"connects": 7}, {"pid_ns": 2}, {"cont": -1}])
def test_a_choice_outside_its_values_is_refused(tmp_path, change):
    """What the set-up switches on must be one of its values: a decoded plan is never
    read as a mode nobody chose."""
    run = minimal(tmp_path, ("a",))
    table = allow_table(str(tmp_path))
    assert nat.plan_reencode(nat.plan_bytes(run, table))
    assert refused(nat.plan_bytes(run._replace(**change), table)) == errno.EINVAL


@FUZZ
@given(st.data())
def test_mutated_plans_are_refused_or_read_back_as_themselves(plans, data):
    _, good = data.draw(st.sampled_from(plans))
    mutated = bytearray(good)
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(mutated) - 1))
        mutated[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(mutated)))
    blob = bytes(mutated[:cut]) + data.draw(st.binary(max_size=16))
    try:
        again = nat.plan_reencode(blob)
    except nat.NativeError as no:
        assert no.errno in (errno.EINVAL, errno.EPROTO), no
        return
    assert nat.plan_reencode(again) == again


@FUZZ
@given(st.binary(max_size=512))
def test_random_bytes_after_the_head_never_crash(plans, tail):
    _, good = plans[0]
    try:
        nat.plan_reencode(good[:HEAD] + tail)
    except nat.NativeError as no:
        assert no.errno in (errno.EINVAL, errno.EPROTO)


# ---- a minimal plan: no namespaces, no helper, a filter that allows everything ----

ALLOW_ALL = struct.pack("<HBBI", 0x06, 0, 0, 0x7FFF0000)  # BPF_RET|BPF_K, SECCOMP_RET_ALLOW


def minimal(where: Path, argv: tuple[str, ...], program: str = "/bin/sh") -> plan.RunPlan:
    """CMD run by a plan with no namespace, no helper and an allow-all filter: what
    ztsa-ns can run untraced (a test's own child, no ztsa around it)."""
    from ztsa.sandbox import landlock, protect

    return plan.RunPlan(
        program=program, argv=argv, env=(("PATH", "/usr/bin:/bin"),), cwd=str(where),
        filter=ALLOW_ALL, drop_caps=False, keep_caps=0, keep_fds=(),
        landlock=landlock.Plan(0, 0, [], []), namespaces=plan.Namespaces.NONE,
        protection=None, creation=protect.Creation(None, [], []), cont=False,
        connects=plan.Connects.LOOP, log=False, log_fd=-1, workspace=str(where),
        pid_ns=False, run_id="wire")


def test_the_agents_kept_state_is_on_the_wire(plans):
    """A field the encoder leaves out reads back as itself too: the kept-state layer's
    entries (the last fields added) must be in the bytes, or ztsa-ns's CMD would run
    without its layer."""
    data = dict(plans)["root_agent_claude"]
    assert b"/home/.claude/projects" in data and b"/home/.claude/history.jsonl" in data
    assert b"/home/.claude/session-env" in data  # a rule of the layer
