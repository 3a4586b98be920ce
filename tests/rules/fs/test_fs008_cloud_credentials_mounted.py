from ztsa.model import Status

TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"


def test_pass(machine):
    assert machine.run("FS008").status is Status.PASS


def test_fail(machine):
    machine.write(TOKEN, "eyJhbGciOi")
    machine.environ.update(KUBERNETES_SERVICE_HOST="10.0.0.1",
                           AWS_CONTAINER_CREDENTIALS_RELATIVE_URI="/v2/credentials/x")
    out = machine.run("FS008")
    assert out.status is Status.FAIL
    assert out.evidence[0].path == TOKEN
    assert "eyJhbGciOi" not in str(out)


def test_unknown(machine, unreadable):
    unreadable(machine, TOKEN.rsplit("/", 1)[0])
    assert machine.run("FS008").status is Status.UNKNOWN
