"""Which memory the settings open, in words two replicas or an admin shell compare: every spelling of
one Hindsight server's URL names the same memory, and another server, port or bank does not."""

import pytest

from memory.settings import MemorySettings


def location(url: str, bank: str = "ops") -> str:
    return MemorySettings(memory="hindsight", hindsight_base_url=url, bank_id=bank).location


@pytest.mark.parametrize(
    "spelling",
    [
        "http://127.0.0.1:8888",
        "http://127.0.0.1:8888/",
        "http://localhost:8888",
        "http://LocalHost:8888/",
        "HTTP://127.0.0.1:8888",
        "http://[::1]:8888",
        " http://localhost:8888 ",
    ],
)
def test_spellings_of_one_local_server_are_one_memory(spelling: str) -> None:
    assert location(spelling) == "hindsight http://127.0.0.1:8888 bank ops"


def test_a_named_server_is_one_memory_with_its_default_port_or_without() -> None:
    spellings = ["http://hindsight", "http://Hindsight:80/", "http://hindsight/"]
    assert {location(url) for url in spellings} == {"hindsight http://hindsight bank ops"}
    assert location("https://hs.example.org:443/api/") == "hindsight https://hs.example.org/api bank ops"


def test_another_server_port_path_or_bank_is_another_memory() -> None:
    one = location("http://127.0.0.1:8888")
    assert location("http://127.0.0.1:8889") != one
    assert location("http://10.0.0.7:8888") != one
    assert location("https://127.0.0.1:8888") != one
    assert location("http://127.0.0.1:8888/other") != one
    assert location("http://127.0.0.1:8888", bank="other") != one


def test_a_password_in_the_url_is_not_part_of_the_words() -> None:
    assert location("http://ops:s3cret@hindsight:8888") == "hindsight http://hindsight:8888 bank ops"


def test_a_url_it_cannot_read_is_kept_as_written() -> None:
    assert location("hindsight:8888/") == "hindsight hindsight:8888 bank ops"
    assert location("http://hindsight:99999/") == "hindsight http://hindsight:99999 bank ops"
