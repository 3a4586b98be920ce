"""What toolchains under the real home get, on real directory trees."""

from ztsa.sandbox import toolchains


def test_a_path_entry_under_a_toolchain_root_names_the_root(tmp_path):
    home = tmp_path / "home"
    (home / ".pyenv" / "shims").mkdir(parents=True)
    (home / ".cargo" / "bin").mkdir(parents=True)
    (home / ".rustup" / "toolchains").mkdir(parents=True)
    (home / ".nvm").mkdir()
    env = {"PATH": f"{home}/.pyenv/shims:{home}/.cargo/bin:/usr/bin"}
    got = toolchains.variables(env, [str(home)])
    assert got == {"PYENV_ROOT": str(home / ".pyenv"), "RUSTUP_HOME": str(home / ".rustup")}


def test_the_callers_own_value_wins_and_a_relative_one_is_dropped(tmp_path):
    home = tmp_path / "home"
    (home / ".pyenv" / "bin").mkdir(parents=True)
    env = {"PATH": f"{home}/.pyenv/bin", "PYENV_ROOT": "/opt/pyenv", "NVM_DIR": "rel"}
    assert toolchains.variables(env, [str(home)]) == {"PYENV_ROOT": "/opt/pyenv"}


def test_git_identity_is_the_name_and_email_only(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = A. Person\n\temail = a@b.invalid\n"
                                     "\tsigningkey = K\n[credential]\n\thelper = store\n")
    text = toolchains.git_identity([str(home)], {})
    assert text == '[user]\n\temail = "a@b.invalid"\n\tname = "A. Person"\n'
    assert toolchains.git_identity([str(tmp_path / "none")], {}) is None
