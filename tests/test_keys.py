"""Mistake keys are registered beside the checks that name them, with a description in each language, so a typo
cannot make a new category on the class page (`python -m grader.course.mistake_keys` drafts the missing lines)."""

import fnmatch

import pytest

from grader.course.exercises import all_exercises
from grader.course.mistake_keys import COMMON, describe, named_keys, registered, registry_file, unregistered
from grader.text import english_prose


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda ex: ex.id)
def test_every_key_a_check_module_names_is_registered(exercise):
    assert unregistered(exercise) == {}, \
        f"run `python -m grader.course.mistake_keys {exercise.id}` for the lines to add"


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda ex: ex.id)
def test_every_registered_key_is_described_in_both_languages(exercise):
    own = set(registered(exercise)) - set(COMMON)
    named = named_keys(exercise.checks)
    unnamed = {key for key in own if not any(fnmatch.fnmatchcase(key, name) for name in named)}
    assert not unnamed, f"{registry_file(exercise).name} registers keys no check names: {unnamed}"
    for key in own:
        text = registered(exercise)[key]
        assert text.render("en") and text.render("zh") and not english_prose(text.render("zh")), key


def test_a_key_pattern_covers_the_keys_it_begins_and_a_typo_is_unknown():
    keys = registered(all_exercises()[4])
    assert describe("raised-ValueError", keys) is COMMON["raised-*"]
    assert describe("sign", keys) is COMMON["sign"] and describe("sgin", keys) is None
