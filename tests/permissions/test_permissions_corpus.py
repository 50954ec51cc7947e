"""The permission corpora as data: the peers' own tests (`data/permissions/peers.txt`) and hostile variants found by
red-teaming (`hostile.txt`, `escapes.txt`), each line a command and the verdict it must get (format:
`permission_corpus.py`). Every case runs through the real policy on a real workspace with links and a git
repository; nothing is mocked."""

from __future__ import annotations

from pathlib import Path

import pytest

from .permission_corpus import Case, corpus_files, judge, load, make_workspace

DATA = Path(__file__).parents[1] / "data" / "permissions"
CASES = [case for path in corpus_files(DATA) for case in load(path)]


@pytest.fixture(scope="module")
def corpus_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("corpus"))


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_corpus_case(case: Case, corpus_ws: Path) -> None:
    wrong = judge(case, corpus_ws)
    assert wrong is None, f"{case!r}: {wrong}"


def test_the_corpora_are_big_enough_and_say_where_they_come_from() -> None:
    by_file = {path.name: load(path) for path in corpus_files(DATA)}
    assert len(by_file["peers.txt"]) >= 150
    assert len(by_file["hostile.txt"]) >= 200
    for path in corpus_files(DATA):
        assert "## " in path.read_text(), f"{path.name} names the sources of its sections"
    commands = [(c.expect, c.rule, c.command) for c in CASES]
    assert len(commands) == len(set(commands)), "a case is listed twice"
