"""Tracks: a course's paths through its exercises (course.toml's [[tracks]]), as a learner meets them through the
CLI (`grade init --track`, `grade list`, `grade next`) and as a course author writes them."""

import json

import pytest
from conftest import grade_here, run_grade

from grader.course.exercises import CourseError, builtin_course, load_course


def ids(proc) -> list[str]:
    assert proc.returncode == 0, proc.stderr
    return [row["id"] for row in json.loads(proc.stdout)]


def test_a_workspace_of_one_track_then_both(tmp_path):
    course = builtin_course()
    basics, scratch = (course.track(name).exercises for name in ("basics", "from-scratch"))
    made = grade_here("init", tmp_path / "ws", "--track", "from-scratch")
    assert made.returncode == 0 and f"{len(scratch)} exercises" in made.stdout, made.stderr
    ws = tmp_path / "ws"
    assert sorted(p.name for p in (ws / "exercises").iterdir()) == sorted(scratch)
    assert ids(grade_here("list", "--json", cwd=ws)) == [name.split("_")[0] for name in scratch]  # in track order
    listed = grade_here("list", cwd=ws)
    assert "Track from-scratch:" in listed.stdout and "Track basics" not in listed.stdout
    assert "Also: basics" in listed.stdout and "ex01" not in listed.stdout
    assert grade_here("next", "--json", cwd=ws).stdout.count('"fs01"') == 1  # the track's first, not ex01
    assert len(ids(grade_here("list", "--all", "--json", cwd=ws))) == len(basics) + len(scratch)

    (ws / "exercises" / "fs01_softmax" / "fs01_softmax.py").write_text("# mine\n")
    added = grade_here("init", ".", "--track", "basics", cwd=ws)
    assert added.returncode == 0 and f"Added {len(basics)} exercises" in added.stdout, added.stderr
    assert (ws / "exercises" / "fs01_softmax" / "fs01_softmax.py").read_text() == "# mine\n"  # never over a file
    rows = json.loads(grade_here("list", "--json", cwd=ws).stdout)
    assert [r["track"] for r in rows] == ["basics"] * len(basics) + ["from-scratch"] * len(scratch)
    both = grade_here("list", cwd=ws).stdout
    assert both.index("Track basics:") < both.index("ex01") < both.index("Track from-scratch:") < both.index("fs01")
    assert ids(grade_here("list", "--track", "from", "--json", cwd=ws))[0] == "fs01"  # a prefix names a track
    assert grade_here("next", "--json", cwd=ws).stdout.count('"ex01"') == 1


def test_a_workspace_of_every_track_and_a_track_that_is_not_there(tmp_path):
    made = grade_here("init", tmp_path / "all")
    assert made.returncode == 0, made.stderr
    assert len(list((tmp_path / "all" / "exercises").iterdir())) == len(builtin_course().exercises())
    zh = grade_here("--lang", "zh", "list", cwd=tmp_path / "all").stdout
    assert "路线 basics：" in zh and "路线 from-scratch：" in zh
    for args in (("init", tmp_path / "none", "--track", "nope"), ("list", "--track", "nope")):
        proc = run_grade(*args, cwd=tmp_path)
        assert proc.returncode == 2 and "no track 'nope' (tracks: basics, from-scratch)" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "none").exists()


@pytest.mark.parametrize("toml,error", [
    ('[[tracks]]\nname = "a"\nexercises = ["hw1"]\n[[tracks]]\nname = "b"\nexercises = ["hw1"]\n', "named once"),
    ('exercises = ["hw1"]\n[[tracks]]\nname = "a"\nexercises = ["hw1"]\n', "lists its exercises in them"),
    ('[[tracks]]\nexercises = ["hw1"]\n', "needs a name"),
    ('tracks = "a"\n', "tracks are tables"),
])
def test_a_course_author_hears_what_is_wrong_with_the_tracks(tmp_path, toml, error):
    (tmp_path / "course.toml").write_text('name = "c"\n' + toml)
    with pytest.raises(CourseError, match=error):
        load_course(tmp_path)


def test_tracks_number_on_and_find_by_number(tmp_path):
    (tmp_path / "course.toml").write_text('name = "c"\n[[tracks]]\nname = "one"\nexercises = ["hw2", "hw1"]\n'
                                          '[[tracks]]\nname = "two"\ntitle = "Two"\nzh = "二"\nexercises = ["x1"]\n')
    for name in ("hw1", "hw2", "x1"):
        (tmp_path / "exercises" / name).mkdir(parents=True)
        (tmp_path / "exercises" / name / "exercise.toml").write_text(f'title = "{name}"\n')
    course = load_course(tmp_path)
    assert [(ex.name, ex.number) for ex in course.exercises()] == [("hw2", 1), ("hw1", 2), ("x1", 3)]
    assert course.find("3").name == "x1" and course.track_of(course.find("x1")).text("zh") == "二"
    assert course.track("one").text("zh") == "one"  # no Chinese title: its name
