"""The direction of imports between the packages, read from the source with ``ast``.

``incidents`` and ``memory`` import neither ``agent`` nor ``web``; ``agent`` never imports ``web``, and
inside it ``agent.core`` imports no job while the briefing job imports neither of the others;
``web.http`` never imports a memory driver; nothing in the product imports ``evals``; ``web`` reaches
memory only through ``memory.service`` (the composition root alone opens a driver; the pure text
helpers of ``memory.text`` touch no memory). Every package
opens with a docstring that says its job and what it may import.
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "incidents": ROOT / "src" / "incidents",
    "memory": ROOT / "src" / "memory",
    "agent": ROOT / "src" / "agent",
    "evals": ROOT / "src" / "evals",
    "web": ROOT / "web",
}
DRIVERS = ("memory.embedded", "memory.hindsight", "memory.hindsight_results", "memory.factory")

# (importing package or sub-package, forbidden module prefixes)
RULES: list[tuple[str, tuple[str, ...]]] = [
    ("incidents", ("agent", "web", "evals")),
    ("memory", ("agent", "web", "evals")),
    ("agent", ("web", "evals")),
    ("agent.core", ("agent.briefing", "agent.resolution", "agent.profile", "agent.llm", "agent.endpoint")),
    ("agent.briefing", ("agent.resolution", "agent.profile", "agent.llm", "agent.endpoint")),
    ("agent.profile", ("agent.briefing", "agent.resolution")),
    ("web", ("evals",)),
    ("web.http", DRIVERS),
]


def _module_name(path: Path) -> str:
    for package, root in PACKAGES.items():
        if path.is_relative_to(root):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise ValueError(path)


def _sources() -> Iterator[Path]:
    for root in PACKAGES.values():
        yield from sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every module a file imports, relative imports resolved, with its line."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_the_packages_are_where_the_rules_expect() -> None:
    for root in PACKAGES.values():
        assert (root / "__init__.py").is_file(), root
    assert (ROOT / "web" / "http" / "__init__.py").is_file()


@pytest.mark.parametrize(("importer", "forbidden"), RULES, ids=[rule[0] for rule in RULES])
def test_imports_point_one_way(importer: str, forbidden: tuple[str, ...]) -> None:
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in _sources()
        if _within(_module_name(path), importer)
        for line, name in _imports(path)
        if any(_within(name, prefix) for prefix in forbidden)
    ]
    assert broken == [], "\n".join(broken)


# The composition root: the only web modules that may name memory's driver factory and settings.
COMPOSITION_ROOT = {
    "web.app.container": ("memory.factory", "memory.settings"),
    "web.app.settings": ("memory.settings",),
}


def test_web_reaches_memory_only_through_its_service() -> None:
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in _sources()
        if _within(module := _module_name(path), "web")
        for line, name in _imports(path)
        if _within(name, "memory")
        and not _within(name, "memory.service")
        and not _within(name, "memory.text")
        and not any(_within(name, allowed) for allowed in COMPOSITION_ROOT.get(module, ()))
        and name != "memory"
    ]
    assert broken == [], "\n".join(broken)


def test_memory_reads_from_incidents_only_severities_the_wal_switch_settings_and_time_checks() -> None:
    allowed = ("incidents.severity", "incidents.sqlite_wal", "incidents.env_settings", "incidents.time_input")
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in _sources()
        if _within(_module_name(path), "memory")
        for line, name in _imports(path)
        if _within(name, "incidents") and not any(_within(name, a) for a in allowed) and name != "incidents"
    ]
    assert broken == [], "\n".join(broken)


def test_every_package_says_its_job_and_what_it_may_import() -> None:
    missing = []
    for path in _sources():
        if path.name != "__init__.py" or "migrations" in path.parts:
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if "import" not in doc.lower():
            missing.append(str(path.relative_to(ROOT)))
    assert missing == [], "packages without a docstring naming what they may import: " + ", ".join(missing)
