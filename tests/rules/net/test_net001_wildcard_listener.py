import os

from ztsa.model import Status

HEAD = ("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt"
        "   uid  timeout inode\n")


def row(addr: str, port: int, state: str = "0A", inode: int = 1000) -> str:
    return (f"   0: {addr}:{port:04X} 00000000:0000 {state} 00000000:00000000 00:00000000 "
            f"00000000     0        0 {inode} 1 0000000000000000 100 0 0 10 0\n")


def test_pass_loopback_and_established_only(machine):
    machine.write("/proc/net/tcp", HEAD + row("0100007F", 8080) + row("00000000", 22, "01"))
    machine.write("/proc/net/tcp6", HEAD + row("00000000000000000000000001000000", 8080))
    assert machine.run("NET001").status is Status.PASS


def test_fail_names_port_and_owner(machine):
    machine.write("/proc/net/tcp", HEAD + row("00000000", 8765, inode=4242))
    machine.write("/proc/net/tcp6", HEAD + row("0" * 32, 9000, inode=4343)
                  + row("0000000000000000FFFF000000000000", 9100, inode=4444))
    fd_dir = machine.host().path("/proc/777/fd")
    os.makedirs(fd_dir)
    os.symlink("socket:[4242]", os.path.join(fd_dir, "3"))
    machine.write("/proc/777/comm", "devserver\n")
    out = machine.run("NET001")
    assert out.status is Status.FAIL
    assert "8765, 9000, 9100" in out.message
    details = [e.detail for e in out.evidence]
    assert "port 8765 listens on 0.0.0.0:8765 (pid 777 (devserver))" in details
    assert any("[::]:9000" in d and "owner not visible" in d for d in details)
    assert any("[::ffff:0.0.0.0]:9100" in d for d in details)


def test_unknown_without_tables(machine):
    assert machine.run("NET001").status is Status.UNKNOWN


def test_unknown_malformed(machine):
    machine.write("/proc/net/tcp", HEAD + row("ZZZZ", 1))
    assert machine.run("NET001").status is Status.UNKNOWN
