"""``recallops memory copy`` as a team runs it to move its laptop's embedded memory to where the
service's memory is: what it would copy, what it copied, nothing the second time, and one line
with exit 2 for a source it cannot use."""

import asyncio
import uuid
from pathlib import Path

import pytest

from memory.bank import MemoryBank
from memory.settings import MemorySettings
from tests.memory.test_transfer import CORRECTION, JWT, POOL, RUNBOOK, embedded, team_bank
from tests.support.hindsight import HindsightServer, hindsight_bank
from tests.support.server import LiveServer

IDS = sorted([CORRECTION.document_id, POOL.incident_id, JWT.incident_id, RUNBOOK.runbook_id])


@pytest.fixture
def laptop(tmp_path: Path) -> Path:
    """The data directory of a laptop's embedded memory, closed (as an old laptop's is)."""

    async def fill() -> None:
        await (await team_bank(tmp_path / "laptop")).close()

    asyncio.run(fill())
    return tmp_path / "laptop"


def held(bank: MemoryBank) -> list[str]:
    async def ids() -> list[str]:
        try:
            return await bank.document_ids()
        finally:
            await bank.close()

    return asyncio.run(ids())


def test_the_laptop_bank_is_copied_once_and_a_dry_run_only_lists_it(laptop: Path, tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "shared")

    dry = operator.cli("memory", "copy", "--from-embedded", str(laptop), "--dry-run")
    assert dry.stdout.splitlines()[0] == (
        f"would copy from embedded {(laptop / 'memory.db').resolve()} "
        f"to embedded {(tmp_path / 'shared' / 'memory.db').resolve()}"
    )
    assert f"  would copy {POOL.incident_id} (incident, checkout-service)" in dry.stdout
    assert f"  would copy {RUNBOOK.runbook_id} (runbook, checkout-service)" in dry.stdout
    assert dry.stdout.splitlines()[-1] == "would copy 4, already there 0"
    assert held(embedded(tmp_path / "shared")) == []

    done = operator.cli("memory", "copy", "--from-embedded", str(laptop))
    assert "skipped 1 mental model (team-reliability-profile)" in done.stdout
    assert done.stdout.splitlines()[-1] == "copied 4, already there 0, failed 0"
    assert held(embedded(tmp_path / "shared")) == IDS

    again = operator.cli("memory", "copy", "--from-embedded", str(laptop))
    assert again.stdout.splitlines()[-1] == "copied 0, already there 4, failed 0"


def test_many_skipped_mental_models_are_counted_on_one_line_and_listed_on_a_dry_run(
    laptop: Path, tmp_path: Path
) -> None:
    async def add_models() -> None:
        bank = embedded(laptop)
        try:
            for n in range(1, 8):
                await bank.create_mental_model(
                    model_id=f"team-model-{n}", name=f"Model {n}", source_query="x"
                )
        finally:
            await bank.close()

    asyncio.run(add_models())
    models = ["team-model-1", "team-model-2", "team-model-3", "team-model-4", "team-model-5"]
    operator = LiveServer(data_dir=tmp_path / "shared")

    dry = operator.cli("memory", "copy", "--from-embedded", str(laptop), "--dry-run").stdout.splitlines()
    assert [line for line in dry if line.startswith("  would skip ")] == [
        f"  would skip mental model {model}" for model in [*models, "team-model-6", "team-model-7"]
    ] + ["  would skip mental model team-reliability-profile"]
    [said] = [line for line in dry if line.startswith("would skip ")]
    assert said == (
        "would skip 8 mental models: the configured memory builds its own profile from the records "
        "(recallops profile refresh)"
    )

    done = operator.cli("memory", "copy", "--from-embedded", str(laptop)).stdout.splitlines()
    [said] = [line for line in done if "mental model" in line]
    assert said == (
        "skipped 8 mental models (team-model-1, team-model-2, team-model-3 and 5 more): the configured "
        "memory builds its own profile from the records (recallops profile refresh)"
    )
    assert done[-1] == "copied 4, already there 0, failed 0"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "memory copy takes one source: --from-embedded DIR or --from-hindsight URL"),
        (("--from-embedded", "{laptop}", "--from-hindsight", "http://127.0.0.1:9"), "takes one source"),
        (("--from-embedded", "{empty}"), "no embedded memory in {empty}: it holds no memory.db"),
        (("--from-embedded", "{laptop}", "--from-bank", "other"), "--from-bank names a bank"),
        (("--from-hindsight", "http://127.0.0.1:9", "--from-bank", "no/slash"), "bank id must be"),
    ],
)
def test_a_source_it_cannot_use_is_one_line_and_exit_2(
    laptop: Path, tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    (tmp_path / "empty").mkdir()
    paths = {"laptop": laptop, "empty": tmp_path / "empty"}
    refused = LiveServer(data_dir=tmp_path / "shared").cli(
        "memory", "copy", *(a.format(**paths) for a in args), check=False
    )
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith("recallops: ") and refused.stderr.count("\n") == 1, refused.stderr
    assert said.format(**paths) in refused.stderr


def test_the_memory_file_itself_names_its_bank_and_the_folder_above_says_where_one_is(
    laptop: Path, tmp_path: Path
) -> None:
    operator = LiveServer(data_dir=tmp_path / "ops" / "shared")
    by_file = operator.cli("memory", "copy", "--from-embedded", str(laptop / "memory.db"), "--dry-run")
    source = (laptop / "memory.db").resolve()
    assert by_file.stdout.splitlines()[0].startswith(f"would copy from embedded {source} ")
    assert by_file.stdout.splitlines()[-1] == "would copy 4, already there 0"

    above = operator.cli("memory", "copy", "--from-embedded", str(laptop.parent), check=False)
    assert above.returncode == 2
    assert above.stderr == (
        f"recallops: no embedded memory in {laptop.parent}: it holds no memory.db, but {laptop} does "
        f"(--from-embedded {laptop})\n"
    )


def test_copying_the_configured_memory_into_itself_is_refused(laptop: Path) -> None:
    refused = LiveServer(data_dir=laptop).cli("memory", "copy", "--from-embedded", str(laptop), check=False)
    assert refused.returncode == 2
    location = MemorySettings(data_dir=laptop).location
    assert refused.stderr == f"recallops: the source is the configured memory itself ({location})\n"


@pytest.mark.hindsight
def test_the_laptop_bank_is_copied_to_the_hindsight_server(
    laptop: Path, tmp_path: Path, hindsight: HindsightServer
) -> None:
    bank_id = f"team-{uuid.uuid4().hex[:12]}"
    env = {"RECALLOPS_MEMORY": "hindsight", "HINDSIGHT_BASE_URL": hindsight.url, "RECALLOPS_BANK_ID": bank_id}
    operator = LiveServer(data_dir=tmp_path / "admin", env=env)

    done = operator.cli("memory", "copy", "--from-embedded", str(laptop))
    assert done.stdout.splitlines()[0].endswith(f"to hindsight {hindsight.url} bank {bank_id}")
    assert done.stdout.splitlines()[-1] == "copied 4, already there 0, failed 0"
    assert held(hindsight_bank(hindsight.url, bank_id=bank_id)) == IDS

    again = operator.cli("memory", "copy", "--from-embedded", str(laptop))
    assert again.stdout.splitlines()[-1] == "copied 0, already there 4, failed 0"


@pytest.mark.hindsight
def test_a_bank_the_server_does_not_have_is_refused_naming_it_and_is_not_created(
    tmp_path: Path, hindsight: HindsightServer
) -> None:
    typo = f"team-{uuid.uuid4().hex[:12]}"
    operator = LiveServer(data_dir=tmp_path / "admin")
    refused = operator.cli(
        "memory", "copy", "--from-hindsight", hindsight.url, "--from-bank", typo, "--dry-run", check=False
    )
    assert refused.returncode == 2, refused.stdout
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"recallops: cannot read hindsight {hindsight.url} bank {typo}: ")
    assert f"the server has no bank {typo!r}" in line
    assert typo not in hindsight.bank_ids()
