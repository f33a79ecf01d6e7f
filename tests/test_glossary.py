"""Chinese text uses one term per concept (docs/glossary.md): no variant the glossary rules out."""

import re

from conftest import ROOT

GLOSSARY = ROOT / "docs" / "glossary.md"
TEXTS = [ROOT / "grader" / "locale" / "zh.toml", *sorted((ROOT / "exercises").glob("*/README.zh.md*")),
         *sorted((ROOT / "exercises").glob("*/exercise.toml")), *sorted((ROOT / "exercises").glob("*/*.zh.toml")),
         *sorted((ROOT / "grader" / "checks").glob("*.toml")), ROOT / "README.zh.md",
         *sorted((ROOT / "docs").glob("*.zh.md"))]


def ruled_out() -> dict[str, str]:
    """variant -> the term to use instead, from the glossary's table."""
    found = {}
    for row in re.findall(r"^\|([^|\n]*)\|([^|\n]*)\|([^|\n]*)\|$", GLOSSARY.read_text(encoding="utf-8"), re.M):
        term, variants = row[1].strip(), row[2].strip()
        for variant in filter(None, (v.strip() for v in variants.split(","))):
            if re.search(r"[\u4e00-\u9fff]", variant) and " alone" not in variant:
                found[variant] = term
    return found


def test_the_glossary_rules_out_variants():
    assert ruled_out()["叶子节点"] == "叶子张量"


def test_chinese_texts_use_the_glossarys_terms():
    variants = ruled_out()
    found = [f"{path.relative_to(ROOT)}: {variant} (use {term})" for path in TEXTS
             for variant, term in variants.items() if variant in path.read_text(encoding="utf-8")]
    assert not found, "\n".join(found)


def test_the_pass_label_is_not_a_bare_tongguo():
    assert re.search(r'^"ok" = "已通过"$', (ROOT / "grader" / "locale" / "zh.toml").read_text(encoding="utf-8"), re.M)


def test_the_first_pages_link_their_chinese_versions_and_back():
    for english in (ROOT / "README.md", ROOT / "docs" / "learning.md", ROOT / "docs" / "curriculum.md"):
        chinese = english.with_name(english.stem + ".zh.md")
        assert f"中文：[{chinese.name}]({chinese.name})" in english.read_text(encoding="utf-8").split("\n\n")[1]
        assert f"English: [{english.name}]({english.name})" in chinese.read_text(encoding="utf-8").split("\n\n")[1]
