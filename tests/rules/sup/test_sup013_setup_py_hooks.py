from ztsa.model import Status


def test_pass(machine):
    machine.fixture("py-setup-plain")
    machine.ws("other/setup.py", "import subprocess\n\ndef version():\n"
               "    return subprocess.check_output(['git', 'describe'])\n")
    assert machine.run("SUP013").status is Status.PASS


def test_fail(machine):
    machine.fixture("py-setup-cmdclass")
    out = machine.run("SUP013")
    assert out.status is Status.FAIL
    assert sorted((e.line, e.detail) for e in out.evidence) == [
        (6, "class PostInstall subclasses the install command"),
        (12, "module-level call to base64.b64decode()"),
        (12, "module-level call to exec()"),
        (13, "cmdclass overrides 'install'"),
    ]


def test_fail_network_at_module_level(machine):
    machine.ws("setup.py", "import urllib.request, os\n"
               "if True:\n    urllib.request.urlopen('https://x.invalid')\nos.system('id')\n")
    out = machine.run("SUP013")
    assert [e.line for e in out.evidence] == [3, 4]


def test_unknown(machine):
    machine.ws("setup.py", "def broken(:\n")
    out = machine.run("SUP013")
    assert out.status is Status.UNKNOWN and "not valid Python" in out.message
