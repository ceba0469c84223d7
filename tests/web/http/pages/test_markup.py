"""Every page is balanced HTML with unique ids, one h1, labelled form fields and no inline script or style."""

from html.parser import HTMLParser

from tests.web.http.pages.conftest import Site
from tests.web.http.pages.test_incident_pages import _store_briefing

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SVG_LEAVES = {"rect", "line", "path", "circle"}


class Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.ids: list[str] = []
        self.labels: set[str] = set()
        self.fields: list[str] = []
        self.h1 = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.append(str(found["id"]))
        if tag == "label" and found.get("for"):
            self.labels.add(str(found["for"]))
        if tag in ("input", "select", "textarea") and found.get("type") not in ("hidden", "submit"):
            self.fields.append(str(found.get("id")))
        if tag == "script" and not found.get("src"):
            self.problems.append("inline script")
        if "style" in found or tag == "style":
            self.problems.append(f"inline style on <{tag}>")
        if any(name.startswith("on") for name in found):
            self.problems.append(f"event handler attribute on <{tag}>")
        self.h1 += tag == "h1"
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID and tag not in SVG_LEAVES:
            self.problems.append(f"self-closed <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            return
        self.stack.pop()


def check(html: str) -> list[str]:
    checker = Checker()
    checker.feed(html)
    problems = list(checker.problems)
    if checker.stack:
        problems.append(f"unclosed: {checker.stack}")
    duplicates = {i for i in checker.ids if checker.ids.count(i) > 1}
    if duplicates:
        problems.append(f"duplicate ids: {sorted(duplicates)}")
    if checker.h1 != 1:
        problems.append(f"{checker.h1} h1 elements")
    unlabelled = [f for f in checker.fields if f not in checker.labels]
    if unlabelled:
        problems.append(f"fields without a label: {unlabelled}")
    return problems


def test_every_page_is_well_formed(site: Site) -> None:
    site.add_user("ana")
    assert check(site.client.get("/signin").text) == []
    site.sign_in("ana")
    first = site.seed(3)[0]
    public_id = site.open_incident(runbook_url="https://runbooks.local/x")
    _store_briefing(site, public_id)
    for path in (
        "/incidents",
        f"/incidents/{public_id}",
        f"/incidents/{public_id}/resolve",
        f"/incidents/{public_id}/replay",
        f"/records/{first}",
        f"/incidents/{first}",
        "/profile",
        "/memory?q=timeout",
        "/incidents/INC-9999",
    ):
        assert check(site.client.get(path).text) == [], path
