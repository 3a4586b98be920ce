"""`ztsa exec --audit-format ocsf`: the audit log's events (docs/audit-schema.json) as
OCSF events (schema.ocsf.io), one JSON object per line, for log pipelines.

A pure mapping, one ztsa event to one OCSF event:
- exec, exit, kill: Process Activity (1007): Launch, Terminate; a refused change of
  another process (a deny line with a target pid): Process Activity, Other;
- a file-system deny line: File System Activity (1001), by the call (Create, Read,
  Update, Delete, Rename, Set Attributes);
- connect, send, listen and a refused destination: Network Activity (4001): Open,
  Traffic, Listen, Refuse;
- dns and a refused query: DNS Activity (4003): Response, Query;
- a --trace-syscalls record: Kernel Activity (1003), Invoke of a System Call;
- the run's own events (env, summary, confinement, learn, signal, quarantine, bytecode,
  reported, index): the Base Event (0), activity Other.
A refusal has action_id 2 (Denied); under --audit-only, where the call went on, 1
(Allowed) with the disposition Logged. Every event keeps the whole ztsa record under
`unmapped.ztsa` (nothing is lost) and the run's ID as metadata.correlation_uid."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VERSION = "1.5.0"  # the OCSF schema version these events follow
PROCESS, FILE, KERNEL, NETWORK, DNS, BASE = 1007, 1001, 1003, 4001, 4003, 0
FILE_ACTIVITY = {  # syscall -> (activity_id, a folder?)
    **dict.fromkeys(("creat", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat"),
                    (1, False)),
    **dict.fromkeys(("mkdir", "mkdirat"), (1, True)),
    **dict.fromkeys(("unlink", "unlinkat"), (4, False)),
    "rmdir": (4, True),
    **dict.fromkeys(("rename", "renameat", "renameat2"), (5, False)),
    **dict.fromkeys(("truncate",), (3, False)),
}
ATTRIBUTE_WORDS = ("chmod", "chown", "utime", "xattr")  # Set Attributes


def _base(record: dict[str, Any], class_uid: int, activity: int, product: str,
          hostname: str) -> dict[str, Any]:
    denied = record.get("event") == "deny" or record.get("decision") == "deny"
    audit = record.get("enforced") is False
    out: dict[str, Any] = {
        "class_uid": class_uid,
        "category_uid": class_uid // 1000,
        "activity_id": activity,
        "type_uid": class_uid * 100 + activity,
        "time": int(float(record.get("time", 0)) * 1000),
        "severity_id": 3 if denied and not audit else 1,  # Medium, Informational
        "metadata": {"version": VERSION, "product": {"name": "ztsa", "vendor_name": "ztsa",
                                                     "version": product},
                     "correlation_uid": str(record.get("run", "")),
                     "profiles": ["security_control"]},
        "device": {"hostname": hostname, "type_id": 0},
        "unmapped": {"ztsa": record},
    }
    if denied:
        out["action_id"], out["disposition_id"] = (1, 17) if audit else (2, 2)  # Logged, Blocked
        if "rule" in record:
            out["message"] = str(record["rule"])
    elif class_uid != BASE:
        out["action_id"], out["disposition_id"] = 1, 1
    return out


def _actor(pid: object) -> dict[str, Any]:
    return {"process": {"pid": pid if isinstance(pid, int) else 0}}


def _endpoint(address: str, port: object) -> dict[str, Any]:
    """ip:port, [ip6]:port, a Unix path or @name as an OCSF network endpoint."""
    if address.startswith(("/", "@")) or address.startswith("unix:"):
        return {"name": address}
    host, sep, _ = address.rpartition(":")
    ip = (host.strip("[]") if sep else address) or address
    out: dict[str, Any] = {"ip": ip}
    if isinstance(port, int):
        out["port"] = port
    return out


def convert(record: dict[str, Any], product: str, hostname: str) -> dict[str, Any]:
    """One ztsa.audit/v1 record as one OCSF event."""
    kind = record.get("event")
    pid = record.get("pid")
    if kind == "exec":
        out = _base(record, PROCESS, 1, product, hostname)
        exe = str(record.get("executable") or "")
        argv = [str(a) for a in record.get("argv") or []]
        out["process"] = {"pid": pid, "cmd_line": " ".join(argv),
                          "name": os.path.basename(exe) or (argv[0] if argv else ""),
                          "file": {"path": exe, "name": os.path.basename(exe), "type_id": 1},
                          "parent_process": {"pid": record.get("ppid") or 0}}
        if record.get("cwd"):
            out["process"]["working_directory"] = record["cwd"]
        out["actor"] = _actor(record.get("ppid"))
        return out
    if kind in ("exit", "kill"):
        out = _base(record, PROCESS, 2, product, hostname)
        out["process"] = {"pid": pid}
        if isinstance(record.get("status"), int):
            out["exit_code"] = record["status"]
        # an exit is the process's own; a kill is ztsa's, after CMD ended
        out["actor"] = _actor(pid) if kind == "exit" else {"app_name": "ztsa"}
        return out
    if kind == "deny" and record.get("path") and record.get("syscall") != "dns":
        call = str(record.get("syscall", ""))
        activity, folder = FILE_ACTIVITY.get(call, (0, False))
        if not activity:  # an attribute change, or an open: a read, else a write
            activity = (6 if any(w in call for w in ATTRIBUTE_WORDS)
                        else 2 if record.get("access") == "read" else 3)
        out = _base(record, FILE, activity, product, hostname)
        path = str(record["path"]).split(" -> ")[0]
        out["file"] = {"path": path, "name": os.path.basename(path) or path,
                       "type_id": 2 if folder else 0}
        out["actor"] = _actor(pid)
        return out
    if kind == "deny" and isinstance(record.get("target"), int):  # another process
        out = _base(record, PROCESS, 99, product, hostname)
        out["process"] = {"pid": record["target"]}
        out["actor"] = _actor(pid)
        return out
    if kind == "dns" or (kind == "deny" and record.get("syscall") == "dns"):
        out = _base(record, DNS, 1 if kind == "deny" else 2, product, hostname)
        out["query"] = {"hostname": str(record.get("name", "")),
                        "type": str(record.get("type", ""))}
        out["rcode"] = str(record.get("rcode", ""))
        out["answers"] = [{"rdata": a} for a in record.get("addresses") or []]
        out["actor"] = _actor(pid)
        return out
    if kind in ("connect", "send", "listen") or (kind == "deny" and record.get("address")):
        activity = {"connect": 1, "send": 6, "listen": 7}.get(str(kind), 5)
        out = _base(record, NETWORK, activity, product, hostname)
        address = str(record.get("address", ""))
        end = _endpoint(address, record.get("port"))
        if kind == "listen":
            out["src_endpoint"] = end
        else:
            out["dst_endpoint"] = end
        out["connection_info"] = {"protocol_name": str(record.get("protocol", "")),
                                  "direction_id": 1 if kind == "listen" else 2}
        out["actor"] = _actor(pid)
        return out
    if kind == "syscall":
        out = _base(record, KERNEL, 4, product, hostname)
        name = str(record.get("name", ""))
        out["kernel"] = {"name": name, "type_id": 2, "system_call": name}
        out["actor"] = _actor(pid)
        return out
    out = _base(record, BASE, 99, product, hostname)  # a run-level event
    out["actor"] = _actor(pid)
    return out


def convert_lines(lines: list[str], product: str, hostname: str) -> list[str]:
    """JSON lines of ztsa records as JSON lines of OCSF events; a line that is no JSON
    object is kept as a Base Event whose unmapped.line holds it."""
    import json

    out = []
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            event = {"class_uid": BASE, "category_uid": 0, "activity_id": 0, "type_uid": 0,
                     "time": 0, "severity_id": 0,
                     "metadata": {"version": VERSION,
                                  "product": {"name": "ztsa", "vendor_name": "ztsa",
                                              "version": product}},
                     "unmapped": {"line": line.rstrip("\n")}}
        else:
            event = convert(record, product, hostname)
        out.append(json.dumps(event, separators=(",", ":")))
    return out
