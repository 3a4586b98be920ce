#!/bin/sh
# Build ztsa's container image here, where no base image can be pulled: a Debian 12
# root file system made with mmdebstrap (or debootstrap) imported into podman as the
# base, ztsa's wheel and its dependencies' built on this machine, then the Dockerfile
# with BASE and the `wheels` build context pointing at them (docs/container.md).
#
#   integration/container/build.sh            # as root: rootful podman's storage
#   integration/container/build.sh --rootless USER
#                                             # as root: the same image in USER's
#                                             # rootless storage (subuid/subgid set up)
#   integration/container/build.sh --from-source
#                                             # the Dockerfile's own build stage (apt's
#                                             # compiler, pip's downloads: the network),
#                                             # image localhost/ztsa:fromsource
#
# A TLS-intercepting proxy's CA (this machine's pip trusts one): ZTSA_CONTAINER_CA=FILE
# is mounted as the build containers' /etc/ssl/certs/ca-certificates.crt, which
# Debian's pip reads (--from-source only; the file is never part of an image).
#
# Everything lives in $ZTSA_CONTAINER_DIR (default /var/tmp/ztsa-container), never in
# the checkout; each step is skipped when its product is there (rm -rf the directory
# to start again). Prints the image's name last. Needs podman and runc, mmdebstrap or
# debootstrap, /usr/bin/python3 (Debian's 3.11, the base's own: the dependencies'
# wheels must fit it) and the package index for pip (cffi, PyYAML, ...).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
W=${ZTSA_CONTAINER_DIR:-/var/tmp/ztsa-container}
BASE=localhost/ztsa-base:bookworm
IMAGE=localhost/ztsa:dev
rootless= source=
case ${1-} in
--rootless) rootless=${2:?--rootless USER} ;;
--from-source) source=1 IMAGE=localhost/ztsa:fromsource ;;
esac
log() { printf 'build.sh: %s\n' "$*" >&2; }
mkdir -p "$W"

# podman's configuration for these builds only: runc (crun fails on this machine's
# hybrid cgroup layout), cgroupfs, no default ulimits (root's hard limits cannot be
# raised here), and storage under $W
cat >"$W/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
cat >"$W/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$W/storage"
runroot = "$W/runroot"
CONF
export CONTAINERS_CONF="$W/containers.conf"

# Docker's default seccomp profile, as far as ztsa is concerned, on podman's own: without
# CAP_SYS_ADMIN no unshare, setns, mount calls or clone with a namespace flag (clone3 is
# ENOSYS, so libc falls back to clone); without CAP_SYS_PTRACE no pidfd_getfd, kcmp or
# process_madvise (moby's profiles/seccomp/default.json says the same in its rules)
python3 - "$W/seccomp-docker-like.json" <<'PY'
import json, sys
profile = json.load(open("/usr/share/containers/seccomp.json"))
gone = {"unshare", "setns", "clone", "clone3", "mount", "umount", "umount2",
        "mount_setattr", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig",
        "fspick", "pidfd_getfd", "kcmp", "process_madvise"}
for rule in profile["syscalls"]:
    rule["names"] = [n for n in rule["names"] if n not in gone]
profile["syscalls"] = [r for r in profile["syscalls"] if r["names"]]
# Docker's refusal is EPERM (podman's ENOSYS): a probe that reads ENOSYS as "missing"
# takes a Docker refusal for a working call
profile["defaultErrnoRet"], profile["defaultErrno"] = 1, "EPERM"
NS_FLAGS = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
profile["syscalls"] += [
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 0, "value": NS_FLAGS, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]},
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
]
json.dump(profile, open(sys.argv[1], "w"), indent=1)
PY

# the root file system: Debian 12, minbase, Python and its venv module
if [ ! -s "$W/rootfs.tar" ]; then
    if command -v mmdebstrap >/dev/null; then
        log "mmdebstrap: a Debian 12 minbase root file system"
        mmdebstrap --quiet --variant=minbase --include=python3,python3-venv bookworm \
            "$W/rootfs.tar.part" http://deb.debian.org/debian
    else
        log "debootstrap: a Debian 12 minbase root file system"
        rm -rf "$W/rootfs"
        debootstrap --variant=minbase --include=python3,python3-venv bookworm \
            "$W/rootfs" http://deb.debian.org/debian >"$W/debootstrap.log"
        tar -C "$W/rootfs" -cf "$W/rootfs.tar.part" .
        rm -rf "$W/rootfs"
    fi
    mv "$W/rootfs.tar.part" "$W/rootfs.tar"
fi

# ztsa's wheel and its dependencies', with Debian's Python (the base's)
# (again when a source file is newer than the wheel)
wheel=$(ls "$W"/wheels/ztsa-*.whl 2>/dev/null | head -n 1) || wheel=
if [ -z "$wheel" ] || [ -n "$(find "$repo/ztsa" "$repo/native" "$repo/setup.py" \
        "$repo/pyproject.toml" -newer "$wheel" \
        \( -name '*.py' -o -name '*.c' -o -name '*.h' -o -name '*.toml' \) -print | head -n 1)" ]; then
    log "pip wheel: ztsa and its dependencies"
    [ -x "$W/venv/bin/pip" ] || /usr/bin/python3 -m venv "$W/venv"
    rm -rf "$W/wheels"
    "$W/venv/bin/pip" wheel --quiet --wheel-dir "$W/wheels" "$repo"
fi

build() {  # in the current user's storage: the base imported, the image built
    podman image exists "$BASE" || podman import "$W/rootfs.tar" "$BASE" >/dev/null
    podman build --quiet --network none --build-arg "BASE=$BASE" --build-context "wheels=$W/wheels" \
        -t "$IMAGE" -f "$repo/Dockerfile" "$repo" >/dev/null
}

if [ -n "$source" ]; then
    export CONTAINERS_STORAGE_CONF="$W/storage.conf"
    podman image exists "$BASE" || podman import "$W/rootfs.tar" "$BASE" >/dev/null
    set -- --build-arg "BASE=$BASE"
    if [ -n "${ZTSA_CONTAINER_CA-}" ]; then
        set -- "$@" -v "$ZTSA_CONTAINER_CA:/etc/ssl/certs/ca-certificates.crt:ro"
    fi
    # the host's network for its RUN steps: podman's bridge would stay behind, a host
    # interface in every later run's view (ENV008)
    podman build --quiet --network host "$@" -t "$IMAGE" -f "$repo/Dockerfile" "$repo" \
        >/dev/null
elif [ -z "$rootless" ]; then
    export CONTAINERS_STORAGE_CONF="$W/storage.conf"
    build
else
    # rootless: USER with subordinate ids, its own storage (podman's default under its
    # home would do; $W keeps everything in one place)
    id "$rootless" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$rootless"
    for f in /etc/subuid /etc/subgid; do
        grep -q "^$rootless:" "$f" 2>/dev/null || echo "$rootless:200000:65536" >>"$f"
    done
    uid=$(id -u "$rootless")
    R=$W/rootless-$rootless
    mkdir -p "$R"
    chown "$rootless:" "$R"
    chmod a+rx "$W"
    chmod a+r "$W/rootfs.tar" "$W/containers.conf" "$W/seccomp-docker-like.json"
    chmod -R a+rX "$W/wheels"
    cat >"$R/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$R/storage"
runroot = "$R/runroot"
CONF
    chmod a+r "$R/storage.conf"
    mkdir -p "/run/user/$uid" && chown "$rootless:" "/run/user/$uid" && chmod 700 "/run/user/$uid"
    runuser -u "$rootless" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$(getent passwd "$rootless" | cut -d: -f6)" \
        XDG_RUNTIME_DIR="/run/user/$uid" CONTAINERS_CONF="$CONTAINERS_CONF" \
        CONTAINERS_STORAGE_CONF="$R/storage.conf" BASE="$BASE" IMAGE="$IMAGE" W="$W" \
        repo="$repo" sh -euc "$(sed -n '/^build() {/,/^}/p' "$0"); build"
    # rootless podman leaves a process holding its user namespace: ended here (the
    # next podman command of the user starts another)
    pause=/run/user/$uid/libpod/tmp/pause.pid
    p=$(cat "$pause" 2>/dev/null) || p=
    case $p in
    '' | *[!0-9]*) ;;
    *) [ "$(stat -c %u "/proc/$p" 2>/dev/null)" = "$uid" ] && kill "$p" 2>/dev/null || : ;;
    esac
fi
echo "$IMAGE"
