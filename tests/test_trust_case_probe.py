"""The probe that tells whether a workspace's filesystem compares names case-insensitively
(macOS, Windows), and the path rules it feeds. This filesystem is case-sensitive; a folding one
is simulated the way the probe sees it: the swapped-case name of the folder leads to the same
folder (here through a symlink, as APFS or NTFS would without one)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from server.policy.paths import case_insensitive, workspace_parts

pytestmark = pytest.mark.skipif(os.name == "nt", reason="Windows folds case itself")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "Ws"
    folder.mkdir()
    case_insensitive.cache_clear()
    yield folder
    case_insensitive.cache_clear()


def fold(folder: Path) -> None:
    folder.with_name(folder.name.swapcase()).symlink_to(folder)


def folds_here(tmp_path: Path) -> bool:
    (tmp_path / "Probe").mkdir()
    return (tmp_path / "pROBE").exists()


def test_a_case_sensitive_filesystem_is_seen_as_one(root, tmp_path):
    if folds_here(tmp_path):
        pytest.skip("this filesystem folds case")
    assert case_insensitive(root) is False
    assert workspace_parts(root / "a.txt", root) == ("a.txt",)
    assert workspace_parts(root.with_name("WS") / "a.txt", root) is None


def test_a_folding_filesystem_is_seen_as_one(root):
    fold(root)
    assert case_insensitive(root) is True
    assert workspace_parts(root / ".GIT" / "Config", root) == (".git", "config")
    assert workspace_parts(root.with_name("WS") / ".Env", root) == (".env",)
    assert workspace_parts(root.parent / "other" / "a.txt", root) is None


def test_the_probe_climbs_to_a_folder_whose_name_has_letters(root):
    fold(root)
    numbered = root / "2024"
    numbered.mkdir()
    assert case_insensitive(numbered) is True
