from ztsa.model import Status

LIMITS = ("Limit                     Soft Limit           Hard Limit           Units\n"
          "Max processes             {n}            {n}            processes\n")


def v2(machine, mem="max", pids="max", nproc="unlimited"):
    machine.write("/proc/self/cgroup", "0::/agent.slice/run\n")
    machine.write("/proc/self/limits", LIMITS.format(n=nproc))
    machine.write("/sys/fs/cgroup/cgroup.controllers", "memory pids\n")
    machine.write("/sys/fs/cgroup/agent.slice/memory.max", "max\n")
    machine.write("/sys/fs/cgroup/agent.slice/run/memory.max", mem + "\n")
    machine.write("/sys/fs/cgroup/agent.slice/run/pids.max", pids + "\n")


def test_pass_cgroup_limits(machine):
    v2(machine, mem="8589934592", pids="512")
    out = machine.run("ENV011")
    assert out.status is Status.PASS
    assert {e.detail for e in out.evidence} == {"cgroup memory.max 8589934592",
                                                 "cgroup pids.max 512"}


def test_pass_ancestor_limit(machine):
    v2(machine)
    machine.write("/sys/fs/cgroup/agent.slice/pids.max", "100\n")
    assert machine.run("ENV011").status is Status.PASS


def test_pass_nproc(machine):
    v2(machine, nproc="4096")
    assert machine.run("ENV011").status is Status.PASS


def test_fail_unlimited(machine):
    v2(machine)
    assert machine.run("ENV011").status is Status.FAIL


def test_unknown(machine):
    machine.write("/proc/self/cgroup", "0::/\n")
    assert machine.run("ENV011").status is Status.UNKNOWN
