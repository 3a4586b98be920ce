"""The C that reads hostile bytes, called directly through cffi (issue #43): the DNS
service's readers of the tree's queries and of upstream answers (native/dns.c), the git
config rewrite guard's reader (native/gitconfig.c), and the helper's escaping of the
tree's names and its reading of /proc/self paths (native/helper.c).

Hand-made cases first, then property-based tests (hypothesis) on random, truncated,
mutated and oversized inputs. Every input is placed so that its last byte is the last
readable byte of a mapping (a PROT_NONE page follows): a read past the given length
faults at once. The properties: no crash, no read past the length, and the results of
a reference: ztsa/sandbox/dns.py's query_name and answer_addresses (the Python tracer's
readers), the construction of the packet itself, and `git config --list`.

ZTSA_FUZZ_EXAMPLES scales the examples of each property (a long run, or one under
AddressSanitizer: see tests/native/asan.sh)."""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import re
import shutil
import string
import struct
import subprocess

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ztsa._native import ffi, lib
from ztsa.sandbox.dns import answer_addresses, query_name

EXAMPLES = int(os.environ.get("ZTSA_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])
# the comparisons with git run a process per example
GIT = settings(FUZZ, max_examples=max(EXAMPLES // 2, 10))

PAGE = mmap.PAGESIZE


class Fenced:
    """A mapping whose readable part ends where a PROT_NONE page begins: bytes placed
    at its end are followed by nothing readable."""

    def __init__(self, capacity: int) -> None:
        self.size = (capacity + PAGE - 1) // PAGE * PAGE
        self.mem = mmap.mmap(-1, self.size + PAGE)
        self.base = int(ffi.cast("uintptr_t", ffi.from_buffer(self.mem)))
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        if libc.mprotect(self.base + self.size, PAGE, 0) != 0:  # PROT_NONE
            raise OSError(ctypes.get_errno(), "mprotect")

    def place(self, data: bytes, ctype: str = "unsigned char *"):
        start = self.size - len(data)
        self.mem[start:self.size] = data
        return ffi.cast(ctype, self.base + start)


DATA = Fenced(1 << 20)
OTHER = Fenced(1 << 20)
OUT = ffi.new("char[]", 4 << 20)


# ---- the C readers ----

def c_query(pkt: bytes):
    """(offset past the question, name, type), or None: ztsa_dns_parse_query."""
    name, qtype = ffi.new("char[256]"), ffi.new("int *")
    r = lib.ztsa_dns_parse_query(DATA.place(pkt), len(pkt), name, 256, qtype)
    return None if r < 0 else (r, ffi.string(name).decode("latin-1"), qtype[0])


def c_name(m: bytes, i: int, size: int = 256):
    out = ffi.new("char[]", max(size, 1))
    r = lib.ztsa_dns_read_name(DATA.place(m), len(m), i, out, size)
    assert r in (0, 1)
    if not r:
        return None
    got = ffi.string(out)
    assert len(got) < size
    return got.decode("latin-1")


def c_answer(pkt: bytes, max_addrs: int = 64):
    """(question name, type, [(version, address, ttl)], how many), or None."""
    qname, qtype = ffi.new("char[256]"), ffi.new("int *")
    addrs = ffi.new("unsigned char[]", 16 * max_addrs)
    versions = ffi.new("int[]", max_addrs)
    ttls = ffi.new("unsigned int[]", max_addrs)
    r = lib.ztsa_dns_answer_addrs(DATA.place(pkt), len(pkt), qname, 256, qtype, addrs,
                                  versions, ttls, max_addrs)
    if r < 0:
        return None
    got = [(versions[k], ffi.buffer(addrs + 16 * k, 4 if versions[k] == 4 else 16)[:],
            ttls[k]) for k in range(min(r, max_addrs))]
    assert all(v in (4, 6) for v, _, _ in got)
    return ffi.string(qname).decode("latin-1"), qtype[0], got, r


def c_denied(pkt: bytes, deny: str):
    which = ffi.new("char[256]")
    r = lib.ztsa_dns_answer_denied(DATA.place(pkt), len(pkt), deny.encode(), which, 256)
    assert r in (-1, 0, 1)
    return r, ffi.string(which).decode("latin-1")


def c_config(text: bytes):
    """[(key, value as written, value as judged)], or None when the guard refuses the
    text; the value as judged is None where git's versions read the value differently
    (the guard refuses to add such an entry)."""
    r = lib.ztsa_gitconfig_entries(DATA.place(text, "char *"), len(text), OUT, len(OUT))
    assert r >= -1
    if r < 0:
        return None
    words, at = [], 0
    for _ in range(3 * r):
        part = ffi.string(OUT + at)
        at += len(part) + 1
        words.append(part.decode("utf-8", "surrogateescape"))
    out = []
    for k in range(0, len(words), 3):
        key, value, judged = words[k:k + 3]
        assert judged == "!" or judged.startswith("=")
        out.append((key, value, judged[1:] if judged != "!" else None))
    return out


def c_acceptable(old: bytes, new: bytes, gitdir: str | None = None,
                 workspace: str = "/nonexistent-ws") -> bool:
    r = lib.ztsa_gitconfig_acceptable(OTHER.place(old, "char *"), len(old),
                                      DATA.place(new, "char *"), len(new),
                                      gitdir.encode() if gitdir else ffi.NULL,
                                      workspace.encode())
    assert r in (0, 1)
    return bool(r)


# ---- DNS packets, made here ----

def wire(labels) -> bytes:
    out = b""
    for label in labels:
        raw = label.encode("latin-1") if isinstance(label, str) else label
        out += bytes([len(raw)]) + raw
    return out + b"\0"


def header(flags: int, qd: int = 1, an: int = 0, ns: int = 0, ar: int = 0,
           ident: int = 0x1234) -> bytes:
    return struct.pack(">HHHHHH", ident, flags, qd, an, ns, ar)


def query(labels, qtype: int = 1, qclass: int = 1, flags: int = 0x0100) -> bytes:
    return header(flags) + wire(labels) + struct.pack(">HH", qtype, qclass)


def rr(owner: bytes, rtype: int, rdata: bytes, ttl: int = 300, rclass: int = 1) -> bytes:
    return owner + struct.pack(">HHIH", rtype, rclass, ttl, len(rdata)) + rdata


def response(labels, records: list[bytes], qtype: int = 1, flags: int = 0x8180,
             an: int | None = None) -> bytes:
    return (header(flags, an=len(records) if an is None else an) + wire(labels) +
            struct.pack(">HH", qtype, 1) + b"".join(records))


def ptr(offset: int) -> bytes:
    return struct.pack(">H", 0xC000 | offset)


LDH = string.ascii_letters + string.digits + "-_"


def fit(labels: list[str]) -> list[str]:
    """the labels of a name the DNS service forwards (at most 253 characters)"""
    while len(".".join(labels)) > 253:
        labels = labels[:-1]
    return labels


labels_st = st.lists(st.text(LDH, min_size=1, max_size=63), min_size=1, max_size=6).map(fit)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
query_flags = u16.map(lambda f: f & 0x07FF)  # no QR, opcode QUERY


@st.composite
def queries(draw):
    labels = draw(labels_st)
    qtype = draw(st.sampled_from([1, 28, 5, 64, 65, 16, 255]) | u16)
    flags = draw(query_flags)
    counts = draw(st.tuples(u16, u16, u16))
    tail = draw(st.binary(max_size=24))
    pkt = (struct.pack(">HHHHHH", draw(u16), flags, 1, *counts) + wire(labels) +
           struct.pack(">HH", qtype, 1) + tail)
    return pkt, labels, qtype, 12 + len(wire(labels)) + 4


class Writer:
    """A response as a resolver writes it, names compressed against the names written
    before (as pointers to their suffixes) or not, as drawn."""

    def __init__(self, draw, labels, qtype: int) -> None:
        self.draw = draw
        self.pkt = bytearray(header(draw(query_flags) | 0x8000))
        self.suffixes: dict[tuple[str, ...], int] = {}
        self.name(labels, compress=False)
        self.pkt += struct.pack(">HH", qtype, 1)

    def name(self, labels, compress: bool | None = None) -> None:
        if compress is None:
            compress = self.draw(st.booleans())
        labels = list(labels)
        for k in range(len(labels)):
            key = tuple(x.lower() for x in labels[k:])
            if compress and key in self.suffixes:
                self.pkt += ptr(self.suffixes[key])  # labels[:k] are written already
                return
            if len(self.pkt) < 0x4000:
                self.suffixes.setdefault(key, len(self.pkt))
            self.pkt += wire([labels[k]])[:-1]
        self.pkt += b"\0"


@st.composite
def responses(draw):
    """(packet, offset past the question, [(version, address, ttl)], the names the
    records give: owners and CNAME targets, lowercase)"""
    qlabels = draw(labels_st)
    qtype = draw(st.sampled_from([1, 28, 5, 65]))
    w = Writer(draw, qlabels, qtype)
    qend = len(w.pkt)
    known = [qlabels]
    addrs, names = [], []
    records = draw(st.integers(0, 8))
    for _ in range(records):
        owner = draw(st.sampled_from(known) | labels_st)
        known.append(owner)
        w.name(owner)
        names.append(".".join(owner).lower())
        rtype = draw(st.sampled_from([1, 1, 28, 28, 5, 16, 65]) | u16)
        ttl = draw(u32)
        fixed = len(w.pkt)
        w.pkt += struct.pack(">HHIH", rtype, 1, ttl, 0)
        if rtype == 5:
            target = draw(st.sampled_from(known) | labels_st)
            known.append(target)
            w.name(target)
            names.append(".".join(target).lower())
        else:
            size = {1: 4, 28: 16}.get(rtype, 0)
            if draw(st.integers(0, 9)) == 0:  # an address record of another length
                size = draw(st.integers(0, 20))
            data = draw(st.binary(min_size=size, max_size=size)) if size else draw(
                st.binary(max_size=30))
            w.pkt += data
            if (rtype, len(data)) in ((1, 4), (28, 16)):
                addrs.append((4 if rtype == 1 else 6, data, ttl))
        rdlen = len(w.pkt) - fixed - 10
        w.pkt[fixed + 8:fixed + 10] = struct.pack(">H", rdlen)
    w.pkt[6:8] = struct.pack(">H", records)
    return bytes(w.pkt), qend, addrs, names


def mutate(draw, pkt: bytes) -> bytes:
    """pkt with a few bytes overwritten, inserted or cut"""
    out = bytearray(pkt)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["set", "set", "insert", "cut"]))
        at = draw(st.integers(0, max(len(out) - 1, 0)))
        if kind == "set" and out:
            out[at] = draw(st.sampled_from([0, 0x3F, 0x40, 0xC0, 0xC0 | (at >> 8), 0xFF]) |
                           st.integers(0, 255))
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=4))
        elif out:
            del out[at:at + draw(st.integers(1, 8))]
    return bytes(out)


# ---- DNS: hand-made cases ----

def test_a_valid_query():
    pkt = query(["Www", "Example", "com"], qtype=28)
    assert c_query(pkt) == (len(pkt), "www.example.com", 28)
    assert query_name(pkt) == "www.example.com"


@pytest.mark.parametrize("pkt", [
    b"", b"\0", bytes(16), header(0x0100) + b"\0\0\x01\0\x01",  # the root: no name
    query(["a"], qclass=3),                                      # not IN
    query(["a"], flags=0x8100),                                  # a response
    query(["a"], flags=0x2900),                                  # opcode UPDATE
    header(0x0100, qd=2) + wire(["a"]) + b"\0\x01\0\x01",        # two questions
    header(0x0100, qd=0) + wire(["a"]) + b"\0\x01\0\x01",        # none
    header(0x0100) + b"\x01a" + ptr(12) + b"\0\x01\0\x01",       # compression
    header(0x0100) + ptr(12) + b"\0\x01\0\x01",                  # a pointer to itself
    query(["a.b"]), query(["a\0b"]), query(["a b"]), query(["\xe9"]),  # not a host name
    query(["a"])[:-1],                                           # truncated type/class
])
def test_queries_the_service_does_not_forward(pkt):
    assert c_query(pkt) is None


def test_labels_of_63_and_64():
    assert c_query(query(["a" * 63]))[1] == "a" * 63
    assert c_query(query(["a" * 64])) is None
    m = wire(["a" * 63, "b"])
    assert c_name(m, 0) == "a" * 63 + ".b"
    assert c_name(wire(["a" * 64]), 0) is None


def test_names_of_255_and_256_bytes():
    n255 = ["a" * 63] * 3 + ["a" * 61]  # 4 + 63 * 3 + 61 + 1 bytes: the longest name
    assert len(wire(n255)) == 255 and len(".".join(n255)) == 253
    assert c_query(query(n255))[1] == ".".join(n255)
    n256 = ["a" * 63] * 3 + ["a" * 62]
    assert len(wire(n256)) == 256
    assert c_query(query(n256)) is None
    # an answer's names: whatever fits the 256 bytes of the reader's buffer
    assert c_name(wire(n255), 0) == ".".join(n255)
    assert c_name(wire(["a" * 63] * 4 + ["b" * 63]), 0) is None


def test_names_with_compression():
    m = bytes(12) + wire(["example", "com"]) + b"\x03www" + ptr(12)
    assert c_name(m, 12) == "example.com"
    assert c_name(m, 25) == "www.example.com"
    assert c_name(b"\x01a" + ptr(4) + b"\x01b\0", 0) == "a.b"   # a forward pointer


@pytest.mark.parametrize("m,i", [
    (ptr(0), 0),                                   # a pointer to itself
    (b"\x01a" + ptr(0), 0),                        # a loop through a label
    (ptr(2) + ptr(0), 0),                          # two pointers to each other
    (b"\x01a" + ptr(200), 0),                      # a pointer past the end
    (b"\x01a\xc0", 0),                             # half a pointer at the end
    (b"\x05ab", 0),                                # a label past the end
    (b"\x01a", 0),                                 # no end
    (b"\x41" + b"a" * 65 + b"\0", 0),              # label types 01 and 10
    (b"\x81" + b"a" * 129 + b"\0", 0),
    (b"", 0), (b"\0", 1), (b"\0", 5),              # nothing there
])
def test_names_that_cannot_be_read(m, i):
    assert c_name(m, i) is None


def test_32_pointers_are_too_many():
    chain = b"".join(ptr(2 * (k + 1)) for k in range(40)) + b"\0"  # the root at 80
    assert c_name(chain, 80 - 2 * 31) == ""  # through 31 pointers
    assert c_name(chain, 80 - 2 * 32) is None


def test_a_zero_length_answer():
    assert c_answer(b"") is None
    assert c_denied(b"", "a")[0] == -1


def test_an_answer_read_as_the_tracer_reads_it():
    a = rr(ptr(12), 1, bytes([93, 184, 216, 34]), ttl=60)
    aaaa = rr(ptr(12), 28, bytes(range(16)), ttl=70)
    pkt = response(["Example", "com"], [a, rr(ptr(12), 16, b"\x02hi"), aaaa])
    assert c_answer(pkt) == ("example.com", 1, [(4, bytes([93, 184, 216, 34]), 60),
                                                 (6, bytes(range(16)), 70)], 2)
    assert answer_addresses(pkt) == [(4, bytes([93, 184, 216, 34])), (6, bytes(range(16)))]


def test_rdlength_past_the_end_stops_the_walk():
    a = rr(ptr(12), 1, bytes([1, 2, 3, 4]))
    pkt = response(["a"], [a, a])
    cut = pkt[:-2]  # the second record's address is half there, its rdlength says 4
    assert c_answer(cut)[2] == [(4, bytes([1, 2, 3, 4]), 300)]
    long = response(["a"], [a, a[:-6] + b"\xff\xff" + a[-4:]])
    assert c_answer(long)[2] == [(4, bytes([1, 2, 3, 4]), 300)]
    # the Python reader agrees: no address is made of what is not there
    assert answer_addresses(cut) == [(4, bytes([1, 2, 3, 4]))]
    assert answer_addresses(long) == [(4, bytes([1, 2, 3, 4]))]


def test_an_aaaa_of_4_bytes_and_an_a_of_16_are_no_addresses():
    pkt = response(["a"], [rr(ptr(12), 28, bytes([1, 2, 3, 4])), rr(ptr(12), 1, bytes(16)),
                           rr(ptr(12), 1, bytes([9, 9, 9, 9]))])
    assert c_answer(pkt)[2] == [(4, bytes([9, 9, 9, 9]), 300)]
    assert answer_addresses(pkt) == [(4, bytes([9, 9, 9, 9]))]


def test_more_records_claimed_than_there_are():
    pkt = response(["a"], [rr(ptr(12), 1, bytes(4))], an=0xFFFF)
    assert c_answer(pkt)[3] == 1


def test_a_cname_chain_loop():
    # a -> b -> a, and an address for a: nothing follows the chain, each name is seen
    pkt = response(["a", "test"], [rr(ptr(12), 5, wire(["b", "test"])),
                                   rr(wire(["b", "test"]), 5, ptr(12)),
                                   rr(ptr(12), 1, bytes([8, 8, 8, 8]))])
    assert c_answer(pkt)[2] == [(4, bytes([8, 8, 8, 8]), 300)]
    assert c_denied(pkt, "b.test") == (1, "b.test")
    assert c_denied(pkt, "a.test") == (1, "a.test")  # an owner
    assert c_denied(pkt, "c.test") == (0, "")


def test_a_cname_target_that_is_a_pointer_loop():
    target = len(response(["a"], [])) + 12  # where the first record's data begins
    loop = response(["a"], [rr(ptr(12), 5, b"\x01x" + ptr(target)), rr(ptr(12), 1, bytes(4))])
    assert c_name(loop, target) is None
    assert c_denied(loop, "x") == (0, "") and c_denied(loop, "x.x") == (0, "")
    assert c_answer(loop)[3] == 1


def test_the_answer_must_be_one_to_a_question_the_service_asks():
    good = response(["a"], [rr(ptr(12), 1, bytes(4))])
    assert c_answer(good) is not None
    assert c_answer(good[:2] + b"\x01" + good[3:]) is None   # not a response
    assert c_answer(good[:4] + b"\0\2" + good[6:]) is None   # two questions
    assert c_answer(good[:12]) is None


def test_an_oversized_answer():
    """65535 bytes of records (the largest UDP answer), the last one cut short."""
    records = [rr(ptr(12), 1, struct.pack(">I", k), ttl=k) for k in range(5000)]
    pkt = response(["big"], records)[:65535]
    got = c_answer(pkt, max_addrs=5000)
    whole = (65535 - 12 - len(wire(["big"])) - 4) // 16
    assert got[3] == whole and got[2][-1] == (4, struct.pack(">I", whole - 1), whole - 1)
    assert [(v, a) for v, a, _ in got[2]] == answer_addresses(pkt)
    assert c_denied(pkt, "nothere")[0] == 0


# ---- DNS: properties ----

@FUZZ
@given(st.binary(max_size=600))
def test_random_bytes_as_a_query(pkt):
    got = c_query(pkt)
    if got is not None:
        assert got[0] <= len(pkt) and query_name(pkt) == got[1]


@FUZZ
@given(st.binary(min_size=12, max_size=600), st.integers(0, 700))
def test_random_bytes_as_names_and_answers(pkt, i):
    name = c_name(pkt, i)
    assert name is None or len(name) <= 255
    answer = c_answer(pkt)
    if answer is not None:
        assert [(v, a) for v, a, _ in answer[2]] == answer_addresses(pkt)
    c_denied(pkt, "a")


@FUZZ
@given(queries())
def test_valid_queries_read_as_the_python_reader_reads_them(q):
    pkt, labels, qtype, qend = q
    name = ".".join(labels).lower()
    assert c_query(pkt) == (qend, name, qtype)
    assert query_name(pkt) == name


@FUZZ
@given(queries())
def test_every_truncation_of_a_query(q):
    pkt, _labels, _qtype, qend = q
    whole = c_query(pkt)
    for k in range(len(pkt)):
        got = c_query(pkt[:k])
        assert got == (whole if k >= qend else None), k


@FUZZ
@given(st.data(), queries())
def test_mutated_queries(data, q):
    pkt = mutate(data.draw, q[0])
    got = c_query(pkt)
    if got is not None:
        assert query_name(pkt) == got[1]
        assert re.fullmatch(r"[a-z0-9_-]{1,63}(\.[a-z0-9_-]{1,63})*", got[1])
        assert len(got[1]) <= 253


@FUZZ
@given(responses())
def test_valid_answers_read_as_made_and_as_the_python_reader_reads_them(r):
    pkt, _qend, addrs, names = r
    _qname, _qtype, got, count = c_answer(pkt)
    assert got == addrs and count == len(addrs)
    assert [(v, a) for v, a, _ in got] == answer_addresses(pkt)
    for name in {*names, "not-there.invalid"}:
        assert c_denied(pkt, name) == ((1, name) if name in names else (0, ""))


@FUZZ
@given(responses())
def test_every_truncation_of_an_answer(r):
    pkt, qend, addrs, _names = r
    for k in range(len(pkt)):
        got = c_answer(pkt[:k])
        if k < qend:
            assert got is None, k
            continue
        assert got[2] == addrs[:len(got[2])], k  # the records that are whole
        assert [(v, a) for v, a, _ in got[2]] == answer_addresses(pkt[:k]), k
        c_denied(pkt[:k], "a")


@FUZZ
@given(st.data(), responses())
def test_mutated_answers(data, r):
    pkt = mutate(data.draw, r[0])
    got = c_answer(pkt)
    if got is not None:
        assert [(v, a) for v, a, _ in got[2]] == answer_addresses(pkt)
    c_denied(pkt, data.draw(st.sampled_from([*r[3], "a"])))


@FUZZ
@given(st.data(), labels_st, st.lists(labels_st, min_size=1, max_size=6))
def test_compressed_names_read_back(data, first, more):
    """Names written with pointers to the suffixes of the names before them (backward,
    as resolvers write them) read back as written, lowercase."""
    w = Writer(data.draw, first, 1)
    starts = [12]
    for labels in more:
        starts.append(len(w.pkt))
        w.name(labels)
    for start, labels in zip(starts, [first, *more], strict=True):
        got = c_name(bytes(w.pkt), start)
        want = ".".join(labels).lower()
        assert got == (want if len(want) <= 255 else None)


# ---- git config: hand-made cases ----

def test_sections_subsections_and_values():
    text = (b"# a comment\n[core]\n\tbare = false\n\tlogAllRefUpdates\n"
            b'[remote "Origin"]\n\turl = "https://example.com/a b" ; gone\n'
            b"[Branch.Main]\n  merge=refs/heads/main # comment\n\n")
    assert c_config(text) == [
        ("core.bare", "false", "false"), ("core.logallrefupdates", "true", "true"),
        ("remote.Origin.url", '"https://example.com/a b" ; gone', "https://example.com/a b"),
        ("branch.main.merge", "refs/heads/main # comment", "refs/heads/main")]


@pytest.mark.parametrize("text", [
    b'[remote "o\\"x"]\n\turl = x\n',      # an escape in a subsection
    b"[a]\n\tk = x\\\n  y\n",               # a continued line
    b"[a]\n\tk = x\\",                      # a backslash at the end of the file
    b"[a]\n\tk = a\\tb\n",                  # an escape in a value
    b"[a]\n\tk = a\0b\n", b"[a\0]\n",       # NUL bytes
    b"[a]\r\n\tk = v\r\n",                  # CRLF
    b"[a]\n\tk = " + b"x" * 100_000 + b"\n",  # a 100 KB line
    b"[a] k = v\n",                         # a key after the header
    b"k = v\n",                             # a key before any section
    b'[a "x]\n', b"[a\n", b"[]\n", b"[a]]\n", b"[a\t\"x\"]\n",
    b"[a]\n\tk v\n", b"[a]\n\t= v\n", b"[a]\n\tk_x = v\n",
])
def test_lines_git_does_not_write_here_are_refused(text):
    assert c_config(text) is None


def test_includes_are_entries_like_any_other_and_never_followed(tmp_path):
    inc = tmp_path / "inc"
    inc.write_text("[core]\n\thooksPath = /x\n")
    text = f"[include]\n\tpath = {inc}\n[includeIf \"gitdir:/\"]\n\tpath = {inc}\n".encode()
    assert c_config(text) == [("include.path", str(inc), str(inc)),
                              ("includeif.gitdir:/.path", str(inc), str(inc))]
    assert not c_acceptable(b"", text)


def test_the_longest_key_and_value():
    ok = b"[s]\n\tk = " + b"v" * 1599 + b"\n"
    assert c_config(ok)[0][1] == "v" * 1599
    assert c_config(b"[s]\n\tk = " + b"v" * 1600 + b"\n") is None
    assert c_config(b"[" + b"s" * 299 + b"]\n\t" + b"k" * 63 + b" = v\n") is not None
    assert c_config(b"[" + b"s" * 300 + b"]\n\tk = v\n") is None
    assert c_config(b"[s]\n\t" + b"k" * 64 + b" = v\n") is None
    many = b"[s]\n" + b"\tk = v\n" * 1024
    assert len(c_config(many)) == 1024
    assert c_config(many + b"\tk = v\n") is None


@pytest.mark.parametrize("added,ok", [
    (b'[submodule "lib"]\n\turl = https://example.com/lib.git\n\tactive = true\n', True),
    (b'[submodule "lib"]\n\turl = ext::sh -c evil\n', False),
    (b'[submodule "lib"]\n\turl = -uevil\n', False),
    (b'[submodule "lib"]\n\tupdate = !evil\n', False),
    (b'[branch "f"]\n\tremote = origin\n\tmerge = refs/heads/f\n', True),
    (b'[branch "f"]\n\tremote = elsewhere\n', False),
    (b"[core]\n\thooksPath = /tmp/h\n", False),
    (b"[user]\n\tname = A. Person\n", True),
    (b'[core]\n\tworktree = /etc\n', False),
    (b'[core]\n\tworktree = ../x\n', False),  # no git directory known
])
def test_the_guard_judges_what_is_added(added, ok):
    old = b'[core]\n\tbare = false\n[remote "origin"]\n\turl = /x\n'
    assert c_acceptable(old, old + added) is ok
    assert c_acceptable(old, old)


def test_a_submodule_worktree_must_lie_in_the_workspace(tmp_path):
    ws, gitdir = tmp_path / "ws", tmp_path / "ws" / ".git" / "modules" / "lib"
    gitdir.mkdir(parents=True)
    (ws / "lib").mkdir()
    for value, ok in [("../../../lib", True), (str(ws / "lib"), True), ("../../../..", False),
                      ("/tmp", False), ("../../../nothere", False)]:
        text = f"[core]\n\tworktree = {value}\n".encode()
        assert c_acceptable(b"", text, str(gitdir), str(ws)) is ok, value


@pytest.mark.parametrize("value,judged", [
    ('" a b "', " a b "), ('x "  " ', "x   "), ('"" x', "x"), ("a b  # c", "a b"),
    ('"#;" ; c', "#;"), ("a\t# c", "a"), ('\t"a"\t', "a"),
    ("a\tb", None), ('a\t"b"', None),  # a space to older git, a tab to newer
])
def test_values_are_judged_as_git_reads_them(value, judged):
    text = f"[user]\n\tname = {value}\n".encode()
    assert c_config(text)[0][2] == judged
    assert c_acceptable(b"", text) is (judged is not None)


def test_a_worktree_is_judged_as_git_reads_it(tmp_path):
    """Regression (found by the comparison with git): the guard dropped the whitespace
    inside quotes that git keeps, and judged another path than git's worktree."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    gitdir = ws / ".git" / "modules" / "lib"
    for d in (gitdir, ws / "lib", outside):
        d.mkdir(parents=True)
    (ws / "lib ").symlink_to(outside)  # the tree may make both in its workspace
    (gitdir / " ..").symlink_to(outside)
    for value, ok in [('"../../../lib"', True), ('"../../../lib "', False),
                      ('" ../../../lib"', False)]:
        text = f"[core]\n\tworktree = {value}\n".encode()
        assert c_acceptable(b"", text, str(gitdir), str(ws)) is ok, value


def test_what_git_reads_differently_is_refused():
    assert c_config(b'[core ""]\n\tworktree = /x\n')[0][0] == "core..worktree"
    assert c_config(b"[a]\n\t1k = v\n") is None  # git: a bad config line
    assert c_config(b"[a]\n\t-k = v\n") is None
    assert c_config(b'[a]\n\tk = "v\n') is None  # a quote left open
    assert c_config(b'[a]\n\tk = "v" "\n') is None


# ---- git config: properties ----

FRAGMENTS = st.sampled_from([
    "[", "]", "[core]\n", '[remote "o"]\n', "[a.b]\n", '[s ""]\n', "\n", " ", "\t", "=",
    " = ", '"', "#", ";", "\\", "\\\n", "\r", "\0", "url", "submodule", "key", "true",
    "\tk = v\n", "x" * 300, "y" * 1700, "é", "\ufeff",
])
config_texts = st.lists(FRAGMENTS | st.text(max_size=6), max_size=50).map(
    lambda parts: "".join(parts).encode("utf-8", "surrogatepass"))


@FUZZ
@given(config_texts | st.binary(max_size=400))
def test_random_text_as_a_config(text):
    got = c_config(text)
    if got is not None:
        for key, value, judged in got:
            assert re.fullmatch(r"[a-z0-9.-]+(\..*)?\.[a-z][a-z0-9-]*", key, re.S), key
            assert "\\" not in value and "\n" not in value and "\0" not in value
            assert judged is None or len(judged) <= len(value)


@FUZZ
@given(config_texts, config_texts)
def test_random_rewrites_are_judged(old, new):
    c_acceptable(old, new)
    c_acceptable(old, old + new)


GIT_BIN = shutil.which("git")
needs_git = pytest.mark.skipif(GIT_BIN is None, reason="git is not installed")


def git_list(text: bytes):
    """[(key, value)] as git reads the config (True: a key without a value), or None"""
    p = subprocess.run([GIT_BIN, "config", "--file", "-", "--list", "--no-includes", "-z"],
                       input=text, capture_output=True, env={"PATH": "/usr/bin:/bin",
                                                             "HOME": "/nonexistent"})
    if p.returncode:
        return None
    out = []
    for item in p.stdout.split(b"\0")[:-1]:
        key, sep, value = item.partition(b"\n")
        out.append((key.decode("utf-8", "surrogateescape"),
                    value.decode("utf-8", "surrogateescape") if sep else True))
    return out


def assert_read_as_git_reads(got, want, text):
    """the guard's entries are git's, each value judged as git reads it, or not judged"""
    assert want is not None, text
    assert [k for k, _, _ in got] == [k for k, _ in want], text
    for (_, _, judged), (_, value) in zip(got, want, strict=True):
        assert judged in (None, "true" if value is True else value), text


VALUE_CHARS = string.ascii_letters + string.digits + " \t#;\"-./:@_=[]é"
section_st = st.text(string.ascii_letters + string.digits + "-", min_size=1, max_size=8)
subsection_st = st.text(string.ascii_letters + string.digits + " .-_#;=[]'é", max_size=10)
key_st = st.tuples(st.sampled_from(string.ascii_letters * 8 + "0-"),
                   st.text(string.ascii_letters + string.digits + "-", max_size=8)).map("".join)


@st.composite
def configs(draw):
    """config texts git reads, most of them in the subset the guard reads"""
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        name = draw(section_st)
        form = draw(st.sampled_from(["plain", "sub", "dotted"]))
        head = (f'[{name} "{draw(subsection_st)}"]' if form == "sub" else
                f"[{name}.{draw(section_st)}]" if form == "dotted" else f"[{name}]")
        lines.append(draw(st.sampled_from(["", " ", "\t"])) + head +
                     draw(st.sampled_from(["", " ", " # c", "; c"])))
        for _ in range(draw(st.integers(0, 4))):
            indent = draw(st.sampled_from(["", "\t", "  "]))
            key = draw(key_st)
            if draw(st.integers(0, 5)) == 0:
                lines.append(indent + key)
                continue
            value = draw(st.text(VALUE_CHARS, max_size=16))
            if value.count('"') % 2:  # git refuses an open quote: most values close it
                value += draw(st.sampled_from(['"', '"', ""]))
            lines.append(indent + key + draw(st.sampled_from([" = ", "=", " =", "= "])) + value)
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "# x", "; y", "  "])))
    return ("\n".join(lines) + draw(st.sampled_from(["\n", ""]))).encode()


@needs_git
@GIT
@given(configs())
def test_what_the_guard_reads_git_reads_the_same(text):
    """Whatever the guard accepts, git reads as the same entries, and the guard judges
    each value as git reads it."""
    got = c_config(text)
    assume(got is not None)
    assert_read_as_git_reads(got, git_list(text), text)


@needs_git
@GIT
@given(st.lists(st.tuples(
    st.sampled_from(["submodule.lib.url", "submodule.Lib x.active", "branch.main.merge",
                     "branch.a/b.remote", "user.name", "user.email", "core.worktree",
                     "remote.origin.url"]),
    st.text(string.ascii_letters + string.digits + " #;-./:@_=", max_size=12)),
    min_size=1, max_size=4))
def test_configs_git_writes_are_read_as_git_reads_them(tmp_path_factory, entries):
    """What `git config` writes (values without what git escapes: a quote, a backslash,
    a tab, a newline) the guard reads, and judges the values git meant."""
    path = tmp_path_factory.mktemp("cfg") / "config"
    path.write_text('[remote "origin"]\n\turl = /x\n')
    for key, value in entries:
        subprocess.run([GIT_BIN, "config", "--file", str(path), "--add", key, value],
                       check=True, env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    text = path.read_bytes()
    got = c_config(text)
    assert got is not None, text
    assert sorted(v for _, _, v in got) == sorted(["/x", *(v for _, v in entries)])
    assert_read_as_git_reads(got, git_list(text), text)


@needs_git
@GIT
@given(st.data(), configs())
def test_truncated_configs(data, text):
    cut = text[:data.draw(st.integers(0, len(text)))]
    got = c_config(cut)
    if got is not None:
        assert_read_as_git_reads(got, git_list(cut), cut)


# ---- the helper's escaping of names and its /proc/self reading ----

def c_json(raw: bytes, size: int) -> bytes:
    out = ffi.new("char[]", max(size, 1))
    lib.ztsa_json_escape(DATA.place(raw + b"\0", "char *"), out, size)
    got = ffi.string(out)
    assert size == 0 or len(got) < size
    return got


@FUZZ
@given(st.binary(max_size=300).map(lambda b: b.replace(b"\0", b"")) |
       st.text(max_size=100).map(lambda t: t.replace("\0", "").encode("utf-8", "surrogatepass")),
       st.integers(0, 40) | st.just(4096))
def test_json_escape_always_makes_a_json_string(raw, size):
    """Whatever the bytes, the escaped text is a JSON string: the bytes' UTF-8, each
    byte that is not as \\u00XX (U+0080..U+00FF), cut short whole escapes at a time."""
    text = json.loads(b'"' + c_json(raw, size) + b'"')
    whole = raw.decode("utf-8", "surrogateescape").translate(
        {0xDC00 + b: b for b in range(0x80, 0x100)})
    assert whole.startswith(text)
    if size == 4096:
        assert text == whole


PATHS = st.lists(st.sampled_from(["/proc/self/", "/proc/thread-self/", "/dev/fd/",
                                  "/dev/stdin", "/dev/stdout", "fd/", "/", "..", "0", "12",
                                  "x", "/proc/", "self", "\xff"]), max_size=8).map("".join)


@FUZZ
@given(PATHS, st.integers(0, 24) | st.just(4096))
def test_own_path(path, size):
    raw = path.encode("utf-8", "surrogateescape")
    rest = ffi.new("char[]", max(size, 1))
    r = lib.ztsa_own_path(DATA.place(raw + b"\0", "char *"), rest, size)
    if size == 0:
        assert r == -1
        return
    assert r in (0, 1, 2)
    own = re.match(r"/proc/(self|thread-self)/|/dev/fd/|/dev/std(in|out|err)$", path)
    assert bool(r) == bool(own)
    assert len(ffi.string(rest)) < size or not r
    if r == 1:
        assert re.fullmatch(rb"fd/[0-9]+", ffi.string(rest))
