"""A model directory of the user's own: one .onnx file and a tokenizer.json. The output to
read, its pooling and its width are read from the files (and, if need be, one probe run)."""

from __future__ import annotations

import json
from pathlib import Path

from tinycontext import native

from .onnx_session import ModelSpec, Pooling, create_session, load_tokenizer, pick_output
from .presets import ModelNotAvailableError, file_sha256


def resolve_directory(folder: Path) -> ModelSpec:
    folder = folder.resolve()
    models = sorted(folder.glob("*.onnx"))
    tokenizer = folder / "tokenizer.json"
    if len(models) != 1 or not tokenizer.is_file():
        raise ModelNotAvailableError(
            f"model directory {folder} must hold exactly one .onnx file and a tokenizer.json "
            f"(found {len(models)} .onnx file(s), tokenizer.json "
            f"{'present' if tokenizer.is_file() else 'missing'})"
        )
    model = models[0]
    output_name, pooling, dimensions = _inspect_model(model, tokenizer, _pooling_hint(folder))
    return ModelSpec(
        key=f"dir:{file_sha256(model)[:12]}",
        model_path=model,
        tokenizer_path=tokenizer,
        dimensions=dimensions,
        max_tokens=_max_tokens_hint(folder),
        pooling=pooling,
        output_name=output_name,
    )


def _pooling_hint(folder: Path) -> Pooling:
    """CLS when a sentence-transformers pooling config says so; mean otherwise."""
    config = _read_json(folder / "1_Pooling" / "config.json")
    return "cls" if config.get("pooling_mode_cls_token") is True else "mean"


def _max_tokens_hint(folder: Path) -> int:
    for file, key in (
        ("sentence_bert_config.json", "max_seq_length"),
        ("tokenizer_config.json", "model_max_length"),
    ):
        value = _read_json(folder / file).get(key)
        if isinstance(value, int) and 0 < value <= 8192:
            return value
    truncation = _read_json(folder / "tokenizer.json").get("truncation")
    value = truncation.get("max_length") if isinstance(truncation, dict) else None
    return value if isinstance(value, int) and value > 0 else 512  # BERT's position limit


def _read_json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _inspect_model(
    model: Path, tokenizer: Path, token_pooling: Pooling
) -> tuple[str, Pooling, int]:
    """Output name, pooling, dimensions: a rank 2 output is already pooled, rank 3 is per token."""
    try:
        session = create_session(model, 1)
    except Exception as exc:  # onnxruntime raises its own exception types
        raise ModelNotAvailableError(f"cannot load ONNX model {model}: {exc}") from exc
    pooling: Pooling = "none"
    output_name = pick_output(session, "none")
    if output_name is None:
        pooling, output_name = token_pooling, pick_output(session, token_pooling)
    if output_name is None:
        raise ModelNotAvailableError(
            f"{model} has no float output of rank 2 (sentence embedding) or 3 (token states)"
        )
    last = next(o for o in session.get_outputs() if o.name == output_name).shape[-1]
    if isinstance(last, int) and last > 0:
        return output_name, pooling, last
    # Symbolic width: run the model once on a short text to learn it.
    np = native.numpy()

    ids = np.asarray([load_tokenizer(tokenizer, 16).encode("probe").ids], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}
    names = {i.name for i in session.get_inputs()}
    (states,) = session.run([output_name], {k: v for k, v in feed.items() if k in names})
    return output_name, pooling, int(np.asarray(states).shape[-1])
