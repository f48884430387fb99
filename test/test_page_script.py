"""The page's script is built from parts (tools/report/page_script/*.js, then page.js), inlined by
page.py in the order of SCRIPT_PARTS into one script: every part is in that order, each is
one `const` named as its file that uses only the parts before it, and the page's policy
allows exactly the script it holds."""

import base64
import hashlib
import re
from pathlib import Path

from etsuite.tools.report import loading, page

REPO = Path(__file__).resolve().parent.parent
PARTS = REPO / "tools" / "report" / "page_script"
DATA = REPO / "test" / "data" / "reports"


def object_name(part: str) -> str:
    """The `const` a part holds: its file name in camelCase (non_strict -> nonStrict)."""
    head, *rest = part.split("_")
    return head + "".join(word.capitalize() for word in rest)


def code_of(part: str) -> str:
    """A part's text without its comment lines."""
    text = (PARTS / f"{part}.js").read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def test_every_part_is_inlined_once_in_a_fixed_order():
    assert sorted(page.SCRIPT_PARTS) == sorted(p.stem for p in PARTS.glob("*.js"))
    assert len(set(page.SCRIPT_PARTS)) == len(page.SCRIPT_PARTS)
    script = page.page_script()
    starts = [script.index(f"\nconst {object_name(part)} = ") for part in page.SCRIPT_PARTS]
    assert starts == sorted(starts)
    starter = (REPO / "tools" / "report" / "page.js").read_text(encoding="utf-8")
    assert script.endswith(f"\n{starter}}})();\n")  # last: it draws the page


def test_each_part_is_one_const_named_as_its_file():
    for part in page.SCRIPT_PARTS:
        code = code_of(part)
        top = re.findall(r"^(?:const|let|var|function|async function|class) +(\w+)", code, re.M)
        assert top == [object_name(part)], (part, top)
        assert code.rstrip().endswith("})();"), part


def test_a_part_uses_only_the_parts_before_it():
    names = [object_name(part) for part in page.SCRIPT_PARTS]
    for position, part in enumerate(page.SCRIPT_PARTS):
        used = set(re.findall(r"(?<![\w.$\"'])(\w+)(?=\.\w|;)", code_of(part))) & set(names)
        later = used - set(names[:position]) - {names[position]}
        assert not later, (part, sorted(later))


def test_a_part_is_used_by_its_members_only():
    """`summary.draw()`, `const { esc } = format;`: a part's name alone (`if (!summary)`)
    is always true, and names the part where a local value was meant."""
    names = [object_name(part) for part in page.SCRIPT_PARTS]
    alone = re.compile(r"(?<![\w.$\"'</-])(" + "|".join(names) + r")\b(?![.\w\"'>-])")
    for part in page.SCRIPT_PARTS:
        code = re.sub(r"(const \w+ = |\} = \w+;)", "", code_of(part))
        assert not alone.findall(code), (part, alone.findall(code))


def test_the_policy_allows_the_script_the_page_holds():
    html = page.build(loading.load_all(loading.expand_inputs([str(DATA / "portable.json")])))
    (script,) = re.findall(r"<script>(.*?)</script>", html, re.S)
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    (policy,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert f"script-src 'sha256-{digest}';" in policy
    assert script == page.page_script()
