"""Integer matrix products for ONNX models whose weights ship as int8 ("weight-only int8").

The default model stores each weight matrix as int8 with one float scale per output column,
and turns it back into float32 with a Cast and a Mul; onnxruntime folds those at load and then
multiplies in float32. `rewrite` replaces every such `MatMul(x, Mul(Cast(w_int8), scale))`
with an integer product on the same int8 weights:

    s   = max(|x_row|) / 127                    one scale per token row
    x_q = QuantizeLinear(x, s, zero point 128)  uint8: u8 x s8 is the fast VNNI/AVX2 kernel
    y   = MatMulIntegerToFloat(x_q, w_int8, column scales) * s

Scales are per row (token), never per batch: onnxruntime's DynamicQuantizeLinear picks one
scale for the whole batch, which made a text's vector depend on the texts batched with it
(cosine 0.985 between the same text alone and in a batch, measured); per row, a text's vector
is the same alone or in any batch. MatMuls that read the same input (attention's query, key
and value) share one quantisation and one product over their concatenated weights.

The integer products took less time than float32 ones where measured, for batches and single
queries alike, and the vectors stay close to the float32 model's (benchmarks/history.md,
"Integer products for the default model", has the speed and retrieval figures); a little less
close on CPUs without VNNI, whose u8 x s8 kernel adds pairs of products in int16 and so
saturates now and then. `onnx` is imported only here, when a model is first prepared.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from tinycontext import native

log = logging.getLogger(__name__)

RECIPE = "i8row1"
"""Names this rewrite in model keys and cache files: change it whenever the vectors change."""

_MS = "com.microsoft"


class NothingToRewrite(ValueError):
    """The graph has no MatMul on int8 weights with per-column scales."""


def prepare(source: Path, cache_dir: Path | None, tag: str) -> Path | bytes:
    """The rewritten model: a cached file when one is valid, else freshly rewritten bytes.

    The cache is written owner-only and atomically (temp file + rename), so concurrent first
    starts never see half a file; when it cannot be written the bytes are used from memory.
    """
    cached = cache_dir / f"{source.stem}-{RECIPE}-{tag}.onnx" if cache_dir else None
    if cached is not None and cached.is_file():
        return cached
    data = rewrite(source.read_bytes())
    if cached is not None:
        try:
            _write_private(cached, data)
        except OSError as exc:  # a read-only data dir: the model still works, a bit slower
            log.info("could not cache the prepared model (%s); using it from memory", exc)
            return data
        return cached
    return data


def discard(path: Path) -> None:
    """Drops a cached model that onnxruntime could not load (truncated, tampered)."""
    with contextlib.suppress(OSError):
        path.unlink()


def _write_private(path: Path, data: bytes) -> None:
    missing = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    for folder in reversed(missing):  # every folder this creates is owner-only
        folder.mkdir(mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:  # mkstemp creates it 0600
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        discard(Path(tmp))
        raise


def rewrite(model_bytes: bytes) -> bytes:
    """The model with integer MatMuls; raises NothingToRewrite when no MatMul qualifies."""
    try:
        # Through the process-wide import lock: onnx imports numpy, which must not be first
        # imported on two threads at once (see tinycontext.native).
        onnx = native.load("onnx")
    except ImportError as exc:  # a dependency of ours: only a broken install lacks it
        raise RuntimeError(
            "the default model needs the `onnx` package to prepare it: "
            "pip install --force-reinstall onnx (or reinstall tinysuite-context)"
        ) from exc

    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 13:
        raise NothingToRewrite(f"opset {opset} has no per-axis QuantizeLinear (needs >= 13)")
    inits = {t.name: t for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    groups: dict[str, list[tuple[Any, str, str]]] = defaultdict(list)
    for node in graph.node:
        weight = _int8_weight(node, producer, inits) if node.op_type == "MatMul" else None
        if weight is not None:
            groups[node.input[0]].append((node, *weight))
    if not groups:
        raise NothingToRewrite("no MatMul reads int8 weights with per-column scales")

    builder = _Builder(onnx, graph, opset)
    builder.constants()
    # Nodes are matched by identity: names are optional in ONNX and often empty.
    first = {id(members[0][0]): x for x, members in groups.items()}
    replaced = {id(node) for members in groups.values() for node, _, _ in members}
    nodes: list[Any] = []
    for node in graph.node:
        if id(node) in first:
            nodes += builder.group(first[id(node)], groups[first[id(node)]], inits)
        elif id(node) not in replaced:
            nodes.append(node)
    # Control-flow nodes read values implicitly from their subgraphs: keep every node then.
    control_flow = any(n.op_type in ("If", "Loop", "Scan") for n in nodes)
    del graph.node[:]
    graph.node.extend(nodes if control_flow else _live(nodes, {o.name for o in graph.output}))
    used = {name for node in graph.node for name in node.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(o.domain == _MS for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid(_MS, 1))
    data: bytes = model.SerializeToString()
    return data


def _int8_weight(node: Any, producer: dict[str, Any], inits: dict[str, Any]) -> Any:
    """(int8 weight name, per-column scale name) when node's B is Mul(Cast(int8 init), scale)."""
    mul = producer.get(node.input[1])
    if mul is None or mul.op_type != "Mul":
        return None
    cast = producer.get(mul.input[0])
    if cast is None or cast.op_type != "Cast" or cast.input[0] not in inits:
        return None
    weight, scale = inits[cast.input[0]], inits.get(mul.input[1])
    int8 = 3  # onnx.TensorProto.INT8
    if weight.data_type != int8 or len(weight.dims) != 2 or scale is None:
        return None
    columns = weight.dims[1]
    if [d for d in scale.dims if d != 1] not in ([columns], []) or math.prod(scale.dims) != columns:
        return None  # a per-tensor or odd-shaped scale: not the layout this rewrite assumes
    return cast.input[0], mul.input[1]


def _live(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """Nodes whose results are still read: the float dequantisation of weights falls away."""
    needed = set(outputs)
    kept: list[Any] = []
    for node in reversed(nodes):
        if any(out in needed for out in node.output):
            kept.append(node)
            needed.update(i for i in node.input if i)
    return kept[::-1]


class _Builder:
    """Emits the integer subgraph for one group of MatMuls sharing an input."""

    def __init__(self, onnx: Any, graph: Any, opset: int) -> None:
        self.onnx, self.graph, self.opset, self.count = onnx, graph, opset, 0

    def const(self, name: str, value: Any) -> str:
        self.graph.initializer.append(self.onnx.numpy_helper.from_array(value, name))
        return name

    def constants(self) -> None:
        np = native.numpy()

        self.const("tc_i8_inv127", np.array(1 / 127, np.float32))
        self.const("tc_i8_tiny", np.array(1e-12, np.float32))  # an all-zero row divides by this
        self.const("tc_i8_one", np.array(1.0, np.float32))
        self.const("tc_i8_zp", np.array(128, np.uint8))
        self.const("tc_i8_zp1", np.array([128], np.uint8))
        self.const("tc_i8_flat", np.array([-1], np.int64))
        self.const("tc_i8_start", np.array([0], np.int64))
        self.const("tc_i8_axis1", np.array([1], np.int64))

    def group(
        self, x: str, members: list[tuple[Any, str, str]], inits: dict[str, Any]
    ) -> list[Any]:
        np = native.numpy()

        make, to_array = self.onnx.helper.make_node, self.onnx.numpy_helper.to_array
        p = f"tc_i8_{self.count}_"
        self.count += 1
        weights = [to_array(inits[w]) for _, w, _ in members]
        scales = [to_array(inits[s]).reshape(-1).astype(np.float32) for _, _, s in members]
        width = weights[0].shape[0]
        if len(members) == 1:
            weight = members[0][1]
        else:
            weight = self.const(p + "w", np.concatenate(weights, axis=1))
        scale = self.const(p + "ws", np.concatenate(scales))
        self.const(p + "k", np.array([-1, width], np.int64))
        self.const(p + "n", np.array([sum(w.shape[1] for w in weights)], np.int64))
        if self.opset >= 18:  # ReduceMax's axes moved from an attribute to an input
            reduce = make("ReduceMax", [p + "abs", "tc_i8_axis1"], [p + "max"], keepdims=1)
        else:
            reduce = make("ReduceMax", [p + "abs"], [p + "max"], axes=[1], keepdims=1)
        nodes = [
            make("Shape", [x], [p + "shape"]),
            make("Reshape", [x, p + "k"], [p + "x"]),  # rows = tokens of every text
            make("Abs", [p + "x"], [p + "abs"]),
            reduce,
            make("Max", [p + "max", "tc_i8_tiny"], [p + "maxe"]),
            make("Mul", [p + "maxe", "tc_i8_inv127"], [p + "s"]),
            make("Reshape", [p + "s", "tc_i8_flat"], [p + "s1"]),
            make("Shape", [p + "s1"], [p + "rows"]),
            make("Expand", ["tc_i8_zp1", p + "rows"], [p + "zp"]),
            make("QuantizeLinear", [p + "x", p + "s1", p + "zp"], [p + "q"], axis=0),
            make("MatMulIntegerToFloat", [p + "q", weight, "tc_i8_one", scale, "tc_i8_zp"],
                 [p + "yq"], domain=_MS),
            make("Mul", [p + "yq", p + "s"], [p + "y"]),
            make("Slice", [p + "shape", "tc_i8_start", "tc_i8_flat"], [p + "lead"]),
            make("Concat", [p + "lead", p + "n"], [p + "out"], axis=0),
        ]
        outputs = [node.output[0] for node, _, _ in members]
        if len(members) == 1:
            return [*nodes, make("Reshape", [p + "y", p + "out"], outputs)]
        sizes = self.const(p + "sizes", np.array([w.shape[1] for w in weights], np.int64))
        return [*nodes, make("Reshape", [p + "y", p + "out"], [p + "y3"]),
                make("Split", [p + "y3", sizes], outputs, axis=-1)]
