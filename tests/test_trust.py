"""``jaxlint trust``: the user's list of folders whose code the editor server may run
(config/trust.py; the server's side is test_server_trust.py), and the check the server runs
in a folder that is not trusted (``check(run_code=False)``). Each test has a user configuration
folder of its own (XDG_CONFIG_HOME)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from jaxlint.cli.main import main
from jaxlint.config import load_config
from jaxlint.config.trust import containing, read_trusted, trust_file
from jaxlint.engine.cache import ResultCache
from jaxlint.engine.check import check

# The founding example with a suppression that suppresses nothing on a traced line (JX800), whose
# import writes RAN beside it.
FOUNDING = (Path(__file__).resolve().parent.parent / "examples" / "founding.py").read_text().replace(
    "print(my_mapped_function.lower(x, y).compile().as_text())", "my_mapped_function(x, y)").replace(
    "    return x[0], y\n", "    return x[0], y  # noqa: JX202\n")
MARKING = FOUNDING + '\nimport pathlib\n\npathlib.Path(__file__).with_name("RAN").write_text("imported")\n'


@pytest.fixture(autouse=True)
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "user-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder


def trust(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    status = main(["trust", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_trust_list_and_revoke(tmp_path: Path, user_config: Path, capsys: pytest.CaptureFixture,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    assert trust(capsys, "--list") == (0, "", f"jaxlint: no trusted folder ({user_config}/jaxlint/trusted.toml)\n")
    status, out, _ = trust(capsys, str(project))
    assert status == 0 and out.startswith(f"trusted {project}:")
    assert trust_file() == str(user_config / "jaxlint" / "trusted.toml")
    monkeypatch.chdir(project / "..")
    assert trust(capsys, "--list")[:2] == (0, f"{project}\n")
    assert read_trusted() == [str(project)]

    status, out, err = trust(capsys, "--revoke", str(project))
    assert (status, out) == (0, f"revoked {project}\n")
    assert read_trusted() == []


def test_the_current_folder_by_default_and_links_by_their_real_path(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.chdir(tmp_path / "link")
    assert trust(capsys)[0] == 0
    assert read_trusted() == [str(real)]
    status, out, _ = trust(capsys, str(tmp_path / "link"))  # already there, under its real path
    assert status == 0 and out == f"{real} is trusted\n" and read_trusted() == [str(real)]


def test_a_folder_inside_a_trusted_one_is_not_added_nor_revoked_alone(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    inner = tmp_path / "project" / "src"
    inner.mkdir(parents=True)
    assert trust(capsys, str(tmp_path / "project"))[0] == 0
    status, out, _ = trust(capsys, str(inner))
    assert status == 0 and out == f"{inner} is trusted (it is in {tmp_path / 'project'})\n"
    status, _, err = trust(capsys, "--revoke", str(inner))
    assert status == 2 and f"it is trusted as part of {tmp_path / 'project'}; revoke that folder" in err
    assert read_trusted() == [str(tmp_path / "project")]


def test_usage_errors_change_nothing(tmp_path: Path, user_config: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "file.py").write_text("")
    assert trust(capsys, str(tmp_path / "file.py"))[2] == f"jaxlint: {tmp_path / 'file.py'}: not a folder\n"
    assert trust(capsys, str(tmp_path / "missing"))[0] == 2
    assert trust(capsys, "--list", str(tmp_path))[0] == 2
    assert trust(capsys, "--revoke", str(tmp_path))[0] == 2
    assert not user_config.exists()


def test_an_invalid_list_is_left_as_it_is(tmp_path: Path, user_config: Path, capsys: pytest.CaptureFixture) -> None:
    listed = user_config / "jaxlint" / "trusted.toml"
    listed.parent.mkdir(parents=True)
    for text in ('trusted = ["relative/path"]\n', "trusted = [\n"):
        listed.write_text(text)
        status, _, err = trust(capsys, str(tmp_path))
        assert status == 2 and err.startswith("jaxlint: the trust list was left as it is: ")
        assert listed.read_text() == text


def test_a_list_written_by_hand_is_read_as_folders(tmp_path: Path, user_config: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    listed = user_config / "jaxlint" / "trusted.toml"
    listed.parent.mkdir(parents=True)
    listed.write_text(f'# mine\ntrusted = ["{tmp_path}/", "{tmp_path}/other/../b"]\n')
    assert read_trusted() == [str(tmp_path), str(tmp_path / "b")]
    assert trust(capsys, "--revoke", str(tmp_path))[:2] == (0, f"revoked {tmp_path}\n")
    assert read_trusted() == [str(tmp_path / "b")]


def test_a_relative_xdg_config_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")  # the XDG rule: only absolute paths count
    monkeypatch.setenv("HOME", str(tmp_path))
    assert trust_file() == str(tmp_path / ".config" / "jaxlint" / "trusted.toml")


def test_a_file_is_in_a_folder_by_its_real_path(tmp_path: Path) -> None:
    project, other = tmp_path / "project", tmp_path / "project2"
    project.mkdir()
    other.mkdir()
    (other / "mod.py").write_text("")
    (project / "linked.py").symlink_to(other / "mod.py")
    (project / "mod.py").write_text("")
    folders = [str(project)]
    assert containing(str(project / "mod.py"), folders) == str(project)
    assert containing(str(project / "linked.py"), folders) is None  # its file is elsewhere
    assert containing(str(other / "mod.py"), folders) is None  # a name that only starts the same
    assert containing(os.path.join(str(project), "..", "project2", "mod.py"), folders) is None


def test_a_check_that_runs_no_code_shows_what_the_cache_holds(tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("")
    path, ran = tmp_path / "founding.py", tmp_path / "RAN"
    path.write_text(MARKING)
    config = load_config([str(path)])

    def codes(run_code: bool) -> list[str]:
        cache = ResultCache(config.cache_dir, config.root, writes=run_code)
        result = check([str(path)], config.rules(), config=config, cache=cache, run_code=run_code)
        assert result.workers_started == (1 if run_code else 0)
        return [f.code for f in result.findings]

    assert codes(run_code=False) == [] and not ran.exists()  # nothing stored yet, nothing run
    assert codes(run_code=True) == ["JX101", "JX800"] and ran.exists()
    ran.unlink()
    assert codes(run_code=False) == ["JX101", "JX800"]  # the stored results of an unchanged file
    path.write_text(MARKING + "# edited\n")
    assert codes(run_code=False) == []
    assert not ran.exists()
    assert check([str(path)], config.rules(), config=config, run_code=False).findings == []  # without a cache
    with pytest.raises(ValueError):
        check([str(path)], config.rules(), config=config, diff=True, run_code=False)


@pytest.mark.parametrize("package", [False, True])
def test_the_notice_names_the_folder_that_holds_the_import_root_and_the_configuration(tmp_path: Path,
                                                                                      package: bool) -> None:
    """The configuration above the module's import root, or the import root above the configuration
    (a package): the folder to trust holds both."""
    pytest.importorskip("lsprotocol")  # the server extra
    from jaxlint.server.gate import folder_to_trust

    src = tmp_path / "project" / "src"
    (src / "pkg").mkdir(parents=True)
    path = src / "pkg" / "mod.py"
    path.write_text("")
    if package:
        (src / "pkg" / "__init__.py").write_text("")
        (src / "pkg" / "jaxlint.toml").write_text("")
    else:
        (tmp_path / "project" / "jaxlint.toml").write_text("")
    expected = src if package else tmp_path / "project"
    assert folder_to_trust(str(path), load_config([str(path)])) == str(expected)
