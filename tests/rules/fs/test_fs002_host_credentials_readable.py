from ztsa.model import Status

MOUNTS = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"


def home(machine):
    machine.write("/proc/self/mountinfo", MOUNTS)
    machine.write("/home/agent/.bashrc", "alias ll='ls -l'\n")
    machine.write("/home/agent/.ssh/known_hosts", "github.com ssh-ed25519 AAAA\n")
    machine.write("/home/agent/.ssh/id_ed25519.pub", "ssh-ed25519 AAAA me\n")
    machine.write("/home/agent/.npmrc", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n")
    machine.write("/home/agent/.docker/config.json", '{"credsStore": "desktop"}')


def test_pass_home_without_credentials(machine):
    home(machine)
    assert machine.run("FS002").status is Status.PASS


def test_fail_keys_and_cloud_credentials(machine):
    home(machine)
    machine.write("/home/agent/.ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    machine.write("/home/agent/.ssh/deploy", "-----BEGIN RSA PRIVATE KEY-----\n")
    machine.write("/home/agent/.aws/credentials", "[default]\naws_access_key_id=AKIA...\n")
    machine.write("/home/agent/.npmrc", "//registry.npmjs.org/:_authToken=npm_abc\n")
    machine.write("/home/agent/.docker/config.json",
                  '{"auths": {"ghcr.io": {"auth": "dXNlcjpwYXNz"}}}')
    out = machine.run("FS002")
    assert out.status is Status.FAIL
    paths = {e.path for e in out.evidence}
    assert paths == {f"/home/agent/{p}" for p in (
        ".ssh/id_ed25519", ".ssh/deploy", ".aws/credentials", ".npmrc", ".docker/config.json")}
    assert "npm_abc" not in str(out)


def test_fail_home_bind_mounted(machine):
    home(machine)
    machine.write("/proc/self/mountinfo",
                  MOUNTS + "40 22 8:1 /home/dev /home/agent rw - ext4 /dev/sda1 rw\n")
    out = machine.run("FS002")
    assert out.status is Status.FAIL and "bind-mounted" in out.evidence[0].detail


def test_pass_unreadable_key_for_another_user(machine):
    home(machine)
    machine.write("/home/agent/.ssh/id_rsa", "-----BEGIN RSA PRIVATE KEY-----\n", mode=0o600)
    assert machine.run_unprivileged("FS002").status is Status.PASS


def test_unknown_without_home(machine):
    machine.environ.pop("HOME")
    assert machine.run("FS002").status is Status.UNKNOWN


def test_unknown_unreadable_ssh_dir(machine, unreadable):
    home(machine)
    import shutil
    shutil.rmtree(machine.host().path("/home/agent/.ssh"))
    unreadable(machine, "/home/agent/.ssh")
    assert machine.run("FS002").status is Status.UNKNOWN
