"""ENV verdicts on the real machine and inside real sandboxes."""

from __future__ import annotations

import os
import shutil

import pytest
from realenv import bwrap_base, by_id, run_json


@pytest.mark.skipif(os.geteuid() != 0, reason="this case is about running as root")
def test_root_on_the_machine_fails_env001(ztsa_bin, tmp_path):
    rc, doc = run_json([ztsa_bin, "check", "--format", "json", str(tmp_path)])
    assert rc == 3 and doc["passed"] is False
    env001 = by_id(doc)["ENV001"]
    assert env001["status"] == "fail" and env001["gating"] is True


def test_bwrap_uid_1000_no_caps(ztsa_bin, tmp_path):
    argv = [*bwrap_base(), "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL",
            "--new-session", "--", ztsa_bin, "check", "--format", "json", "/"]
    _, doc = run_json(argv)
    results = by_id(doc)
    assert results["ENV001"]["status"] == "pass", results["ENV001"]
    assert results["ENV006"]["status"] == "pass", results["ENV006"]
    env003 = results["ENV003"]
    assert env003["status"] == "pass"
    assert "user-namespace sandbox" in env003["message"]
    assert any("uid_map" in e["detail"] for e in env003["evidence"])
    # bwrap always sets NoNewPrivs
    assert results["ENV005"]["status"] == "pass"


@pytest.mark.parametrize("var", ["LD_PRELOAD", "BASH_ENV"])
def test_injection_variable_fails_env009(ztsa_bin, tmp_path, var):
    env = {**os.environ, var: str(tmp_path / "payload")}
    rc, doc = run_json([ztsa_bin, "check", "--format", "json", str(tmp_path)], env=env)
    env009 = by_id(doc)["ENV009"]
    assert rc == 3
    assert env009["status"] == "fail" and var in env009["message"]
    assert str(tmp_path / "payload") not in str(env009)


def test_setpriv_no_new_privs_passes_env005(ztsa_bin, tmp_path):
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is required"
    _, plain = run_json([ztsa_bin, "check", "--format", "json", str(tmp_path)])
    _, confined = run_json([setpriv, "--no-new-privs", ztsa_bin, "check", "--format", "json",
                            str(tmp_path)])
    with open("/proc/self/status") as f:
        nnp_here = "NoNewPrivs:\t1" in f.read()
    assert by_id(plain)["ENV005"]["status"] == ("pass" if nnp_here else "fail")
    assert by_id(confined)["ENV005"]["status"] == "pass"
