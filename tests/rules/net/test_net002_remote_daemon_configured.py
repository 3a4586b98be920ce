import pytest

from ztsa.model import Status


def test_pass(machine):
    machine.environ["DOCKER_HOST"] = "tcp://127.0.0.1:2376"
    machine.write("/home/agent/.docker/config.json", '{"currentContext": "default"}')
    assert machine.run("NET002").status is Status.PASS


@pytest.mark.parametrize(("var", "value", "needle"), [
    ("DOCKER_HOST", "tcp://10.1.2.3:2375", "tcp://10.1.2.3"),
    ("CONTAINER_HOST", "ssh://core@build.example:22", "ssh://build.example"),
    ("DOCKER_HOST", "unix:///var/run/docker.sock", "/var/run/docker.sock"),
    ("KUBECONFIG", "/home/agent/.kube/prod", "KUBECONFIG is set"),
    ("DOCKER_CONTEXT", "prod", "DOCKER_CONTEXT is set"),
])
def test_fail_variables(machine, var, value, needle):
    machine.environ[var] = value
    out = machine.run("NET002")
    assert out.status is Status.FAIL
    assert needle in out.evidence[0].detail


def test_fail_docker_config_context(machine):
    machine.write("/home/agent/.docker/config.json", '{"currentContext": "remote-prod"}')
    out = machine.run("NET002")
    assert out.status is Status.FAIL and "remote-prod" in out.evidence[0].detail


def test_unknown_bad_docker_config(machine):
    machine.write("/home/agent/.docker/config.json", '{"currentContext": ')
    assert machine.run("NET002").status is Status.UNKNOWN
