"""The embedding model with its int8 weights multiplied as integers, built once and kept on disk.

The shipped model stores each weight matrix as int8 with one scale per output column and turns it back
into float32 (``Cast``, then ``Mul``) in front of its ``MatMul``; onnxruntime folds that at load and then
multiplies floats. Here each such ``MatMul`` becomes ``DynamicQuantizeLinear`` of its input,
``MatMulInteger`` against the same weights, and one rescale. Only the activations are quantized, per
inference call, with one scale for the whole input. Measured on two cores: a 28-token query in 4-5 ms
instead of 9, and about twice the tokens per second per core.

The weights are multiplied as unsigned bytes (each int8 weight plus 128, with 128 as their zero point):
the same numbers, but a product of unsigned by signed bytes is summed in pairs into 16 bits on a CPU
with AVX2 and no VNNI, and saturates there. On such a machine the signed weights read texts with a
cosine of 0.993 (median, 0.977 at worst) to the float products' and moved the ranking; unsigned by
unsigned is summed in 32 bits everywhere (0.996, 0.992 at worst), so every machine computes the same
integers, and the same ranks.

Building it needs the ``onnx`` package, whose import alone takes a second, so the result is written to
the cache directory (``cache_dir``) under a name that says what it was built from, and later loads only
read it.
"""

import contextlib
import logging
import os
from pathlib import Path

logger = logging.getLogger(__name__)

# Bumped whenever the rewrite changes, so a cached model of an older rewrite is not read.
REWRITE_VERSION = 2
# The zero point of the unsigned weights: an int8 weight w is held as the byte w + 128.
UNSIGNED_ZERO = 128


def integer_model(source: Path, sha256: str) -> Path | bytes:
    """The rewritten model: its cached file, built and written there first if missing; the model's
    bytes themselves when the cache cannot be written (a read-only home), rebuilt on every load then."""
    cached = cache_dir() / f"{source.stem}-{sha256[:16]}-integer-v{REWRITE_VERSION}.onnx"
    if cached.is_file():
        return cached
    model = rewrite(source.read_bytes())
    part = cached.with_name(f"{cached.name}.{os.getpid()}.part")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        part.write_bytes(model)
        # Whole or absent: a reader never sees a file cut short, and two processes building it at once
        # write the same bytes.
        os.replace(part, cached)
    except OSError as error:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)
        logger.warning(
            "the embedding model could not be cached at %s (%s); it is rebuilt at each load", cached, error
        )
        return model
    return cached


def cache_dir() -> Path:
    """Where built models live: ``$RECALLOPS_CACHE/models``, by default under ``~/.cache/recallops``."""
    return Path(os.environ.get("RECALLOPS_CACHE") or Path.home() / ".cache" / "recallops") / "models"


def rewrite(model: bytes) -> bytes:
    """Every ``MatMul`` whose second input is ``Mul(Cast(int8 initializer), scale initializer)`` as an
    integer product of the same weights, held unsigned; anything else in the graph is left as it was."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    proto = onnx.load_from_string(model)
    graph = proto.graph
    constants = {tensor.name: tensor for tensor in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}

    def int8_weights(name: str) -> tuple[str, str] | None:
        """The int8 matrix and its scales that ``name`` is dequantized from, if it is."""
        dequantize = producer.get(name)
        if dequantize is None or dequantize.op_type != "Mul":
            return None
        cast, scale = producer.get(dequantize.input[0]), dequantize.input[1]
        if cast is None or cast.op_type != "Cast" or scale not in constants:
            return None
        weights = constants.get(cast.input[0])
        if weights is None or weights.data_type != TensorProto.INT8:
            return None
        return weights.name, scale

    nodes, replaced = [], set()
    unsigned: set[str] = set()  # the int8 weights already held unsigned
    for node in graph.node:
        found = int8_weights(node.input[1]) if node.op_type == "MatMul" else None
        if found is None:
            nodes.append(node)
            continue
        weights, scale = found
        replaced.add(node.input[1])
        held, held_zero = f"{weights}/u8", f"{weights}/u8_zero"
        if weights not in unsigned:
            unsigned.add(weights)
            shifted = numpy_helper.to_array(constants[weights]).astype(np.int16) + UNSIGNED_ZERO
            graph.initializer.extend(
                [
                    numpy_helper.from_array(shifted.astype(np.uint8), held),
                    numpy_helper.from_array(np.array(UNSIGNED_ZERO, dtype=np.uint8), held_zero),
                ]
            )
        name = node.name or node.output[0]
        quantized, input_scale, zero_point = f"{name}/q", f"{name}/q_scale", f"{name}/q_zero"
        nodes += [
            helper.make_node(
                "DynamicQuantizeLinear",
                [node.input[0]],
                [quantized, input_scale, zero_point],
                name=f"{name}/quantize",
            ),
            helper.make_node(
                "MatMulInteger",
                [quantized, held, zero_point, held_zero],
                [f"{name}/int32"],
                name=f"{name}/int",
            ),
            helper.make_node(
                "Cast", [f"{name}/int32"], [f"{name}/float"], to=TensorProto.FLOAT, name=f"{name}/cast"
            ),
            helper.make_node("Mul", [input_scale, scale], [f"{name}/scale"], name=f"{name}/scales"),
            helper.make_node(
                "Mul", [f"{name}/float", f"{name}/scale"], list(node.output), name=f"{name}/rescale"
            ),
        ]
    # The float copies of the weights (each Mul, then its Cast) are read by nothing any more.
    muls = replaced - {name for node in nodes for name in node.input}
    nodes = [node for node in nodes if not muls.intersection(node.output)]
    casts = {producer[name].input[0] for name in muls} - {name for node in nodes for name in node.input}
    del graph.node[:]
    graph.node.extend(node for node in nodes if not casts.intersection(node.output))
    # The signed weights are read by nothing now but the word and position tables' lookups.
    read = {name for node in graph.node for name in node.input}
    kept = [tensor for tensor in graph.initializer if tensor.name in read]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    built: bytes = proto.SerializeToString()
    return built
