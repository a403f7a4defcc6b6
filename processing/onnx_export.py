"""ONNX export of a line recognizer's CTC reading path, with a reader that needs neither torch nor textrec.

`export_onnx("crnn-lines", "onnx/crnn-lines")` (the command: `textrec-export --model crnn-lines --format onnx
--output_dir onnx/crnn-lines`) writes:

- `model.onnx`: the image processor's output (`pixel_values (batch, channels, height, width)`, `pixel_mask
  (batch, height, width)`) through the encoder and the CTC head to `log_probs (batch, columns, vocab_size)`
  (log-softmax over the vocabulary, the pad id standing for CTC's blank) and `column_mask (batch, columns)` (1 on
  columns whose receptive field is centred on image pixels), batch and width dynamic;
- `model_int8.onnx`: the same in int8: convolutions quantised statically (calibrated on rendered lines), the LSTM
  and matrix products dynamically (`INT8_STATIC_OP_TYPES`, `INT8_DYNAMIC_OP_TYPES`);
- `onnx_config.json`: the image processor's own settings (`TextRecognitionImageProcessor.to_dict()`), the blank
  and eos ids and the batching of `recognize()`, each read from where textrec declares it;
- `tokenizer.json` (the vocabulary), `textrec_onnx.py` (the reader: onnxruntime, NumPy and Pillow) and the card
  `README.md`.

The reader gives the text that `textrec.processing.inference.recognize` gives with `decoding="ctc"`
(`tests/test_onnx_export.py` checks it, and in a virtual environment without torch).
"""

import contextlib
import json
import logging
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import torch
from torch import nn

from textrec.model_cards import resolve_model_path
from textrec.model_cards.hub import clear_folder_for_export

from ..modeling.crnn import ctc_beam_search
from . import luminance, slant_correction, textrec_onnx
from .image_processing_text_recognition import BLANK_CONTRAST, MIN_IMAGE_SIDE
from .inference import SORT_WINDOW_BATCHES, load_recognizer
from .pipeline_text_recognition import available_decodings, preferred_decoding

ONNX_OPSET = 17
"""The ONNX opset written: LSTM with `sequence_lens` (the packed sequences of CRNN's encoder) and every op of the
line encoders."""
INPUT_NAMES = ("pixel_values", "pixel_mask")
OUTPUT_NAMES = ("log_probs", "column_mask")
INT8_DYNAMIC_OP_TYPES = ("LSTM", "MatMul", "Gemm")
"""The ops whose weights `model_int8.onnx` stores in int8 with activations quantised on the fly (onnxruntime's
dynamic quantisation): int8 LSTMs nearly halve CRNN's time on a CPU core."""
INT8_STATIC_OP_TYPES = ("Conv",)
"""The ops quantised statically (int8 weights per channel, uint8 activations in ranges calibrated on
`INT8_CALIBRATION_LINES` lines), but for the first convolution, which reads the pixels and stays fp32 (quantised, it
cost crnn-lines 0.11 CER points on the receipts, 0.07 kept fp32). onnxruntime runs dynamically quantised convolutions
(`ConvInteger`) about 3x slower than fp32 ones on a CPU core (crnn-lines on receipts: 96 lines/s against 314, the
model alone), statically quantised ones (`QLinearConv`) about 1.4x faster than fp32."""
INT8_CALIBRATION_LINES = 64
"""How many lines calibrate the convolutions' activation ranges: by default the data engine's renderings in its
captured look (scans and photos of print, `synthetic-lines:look=captured`), so that no real image is needed."""
READER_FILE = Path(textrec_onnx.__file__).name
"""The reader, copied into the folder as it is."""


class CTCReadingPath(nn.Module):
    """A recognizer's encoder and CTC head, as one module to trace: what `ctc_decode()` computes before its best
    path.

    Args:
        model: a textrec recognizer with a CTC head (`available_decodings(model)` holds `"ctc"`).
    """

    def __init__(self, model):
        super().__init__()
        self.encoder = model.get_encoder()
        self.ctc_head = model.ctc_head

    def forward(self, pixel_values: torch.FloatTensor, pixel_mask: torch.LongTensor) -> tuple[torch.Tensor, torch.Tensor]:
        """
        Args:
            pixel_values: `(batch, channels, height, width)` from the image processor.
            pixel_mask: `(batch, height, width)`, 1 on image pixels, 0 on padding.

        Returns:
            `log_probs (batch, columns, vocab_size)` and `column_mask (batch, columns)` int64.
        """
        encoder_outputs = self.encoder(pixel_values, pixel_mask=pixel_mask)
        log_probs = torch.log_softmax(self.ctc_head(encoder_outputs.last_hidden_state), dim=-1)
        return log_probs, encoder_outputs.attention_mask.long()


def right_padded_feature_mask(pixel_mask: torch.Tensor, feature_size: tuple[int, int]) -> torch.LongTensor:
    """`downsample_pixel_mask` (the encoders' `adaptive_max_pool2d` of the pixel mask to the feature map) for the
    masks of a line processor, whose images fill every row and are padded on the right only, in ops the ONNX
    exporter writes for any width: adaptive pooling with a size taken from the input has no ONNX form there. A
    feature column is valid where its pooling window, which starts at column `floor(j * width / feature_width)`,
    starts on image pixels; every row of a valid column is.

    Args:
        pixel_mask: `(batch, height, width)`, 1 on real pixels, each row a run of ones from the left.
        feature_size: `(feature_height, feature_width)`.

    Returns:
        `(batch, feature_height, feature_width)` long tensor of 0/1.
    """
    feature_height, feature_width = feature_size
    image_widths = pixel_mask.amax(dim=1).sum(dim=-1)
    window_starts = torch.arange(feature_width, device=pixel_mask.device) * pixel_mask.shape[-1] // feature_width
    valid_columns = (window_starts[None] < image_widths[:, None]).long()
    return valid_columns[:, None, :].expand(-1, feature_height, -1)


@contextlib.contextmanager
def exportable_pixel_masks(model):
    """Within it, the encoder of `model` pools its pixel mask with `right_padded_feature_mask`: the encoders that
    call `downsample_pixel_mask` (the transformer line models) then trace to ONNX with a dynamic width."""
    module = sys.modules[type(model.get_encoder()).__module__]
    if not hasattr(module, "downsample_pixel_mask"):
        yield
        return
    with mock.patch.object(module, "downsample_pixel_mask", right_padded_feature_mask):
        yield


def check_exportable(model, processor, name: str) -> None:
    """Raises a `ValueError` naming what `model` lacks for an ONNX export: a CTC head (the exported reading is the
    CTC head's best path; a decoder's search is no single graph), or an image processor that pads lines
    (`resize_mode="keep_aspect"`, the one the reader repeats)."""
    if "ctc" not in available_decodings(model):
        raise ValueError(
            f"{name} has no CTC head ({type(model).__name__} reads with "
            f"{' or '.join(repr(decoding) for decoding in available_decodings(model))}): the ONNX export writes the "
            "CTC reading path (encoder + CTC head, best path), so it needs a model trained with a CTC head "
            "(CRNN, or ctc_loss_weight > 0).")
    resize_mode = processor.image_processor.resize_mode
    if resize_mode != "keep_aspect":
        raise ValueError(f"{name}'s image processor resizes with resize_mode={resize_mode!r}: the ONNX reader reads "
                         "line models, whose processor keeps the aspect ratio and pads (resize_mode='keep_aspect').")


def example_inputs(processor) -> dict[str, torch.Tensor]:
    """Two blank lines of different widths, processed: the trace's inputs (the padded one makes the trace follow
    the masked path)."""
    from PIL import Image

    lines = [Image.new("L", (96, 32), 255), Image.new("L", (48, 32), 255)]
    return dict(processor(images=lines, return_tensors="pt", warn_images_out_of_range=False))


def write_onnx_model(model, processor, path: Path) -> None:
    """Writes `CTCReadingPath(model)` as ONNX at `path`, batch and width dynamic."""
    inputs = example_inputs(processor)
    # The TorchScript exporter (`dynamo=False`): the torch.export one (torch 2.13, with onnxscript) fails on CRNN's
    # packed sequences (`pack_padded_sequence` sizes a tensor from data: "zeros(): argument 'size' ... got
    # FakeTensor"), which the TorchScript exporter writes as an ONNX LSTM with `sequence_lens`; it needs no
    # onnxscript either.
    with exportable_pixel_masks(model), warnings.catch_warnings():
        # The tracer's warnings (shape checks read as constants; LSTM initial states sized by the example batch) do
        # not apply: the export reads every batch and width alike (tests/test_onnx_export.py).
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.filterwarnings(
            "ignore", message=".*(legacy TorchScript-based ONNX export|batch_size other than 1|feature will be removed).*")
        torch.onnx.export(
            CTCReadingPath(model).eval(),
            (inputs["pixel_values"], inputs["pixel_mask"]),
            str(path),
            dynamo=False,
            opset_version=ONNX_OPSET,
            input_names=list(INPUT_NAMES),
            output_names=list(OUTPUT_NAMES),
            dynamic_axes={
                "pixel_values": {0: "batch", 3: "width"},
                "pixel_mask": {0: "batch", 2: "width"},
                "log_probs": {0: "batch", 1: "columns"},
                "column_mask": {0: "batch", 1: "columns"},
            },
        )


def calibration_lines(count: int = INT8_CALIBRATION_LINES) -> list:
    """`count` lines rendered by the data engine in its captured look (fixed seed): the default calibration set of
    the int8 convolutions."""
    from .data import make_synthetic_lines

    return list(make_synthetic_lines(count, seed=0, look="captured")["image"])


def write_int8_model(model_path: Path, int8_path: Path, processor, calibration_images: list) -> None:
    """Writes `model_path` with int8 weights at `int8_path`: the convolutions quantised statically with activation
    ranges calibrated on `calibration_images` (`INT8_STATIC_OP_TYPES`), then the LSTM and matrix products
    dynamically (`INT8_DYNAMIC_OP_TYPES`), after onnxruntime's pre-processing for quantisation (shape inference,
    graph optimisation). Needs the `onnx` package."""
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Calibration(CalibrationDataReader):
        def __init__(self, batch_size: int = 16):
            self.batches = iter(
                dict(processor(images=calibration_images[start : start + batch_size], return_tensors="np",
                               warn_images_out_of_range=False))
                for start in range(0, len(calibration_images), batch_size))

        def get_next(self):
            return next(self.batches, None)

    # onnxruntime's quantisation logs advice on the root logger (pre-processing, "already quantized?" for the
    # second pass over the QDQ graph) that the steps here follow or do not concern.
    logging.disable(logging.WARNING)
    try:
        with tempfile.TemporaryDirectory(prefix="textrec-onnx-") as scratch:
            prepared, convolutions = Path(scratch) / "prepared.onnx", Path(scratch) / "convolutions.onnx"
            # onnxruntime's symbolic shape inference does not complete on the transformer encoders; ONNX's own suffices.
            quant_pre_process(str(model_path), str(prepared), skip_symbolic_shape=True)
            first_convolution = next(node.name for node in onnx.load(str(prepared)).graph.node if node.op_type == "Conv")
            quantize_static(str(prepared), str(convolutions), Calibration(), quant_format=QuantFormat.QDQ, per_channel=True,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            op_types_to_quantize=list(INT8_STATIC_OP_TYPES), nodes_to_exclude=[first_convolution])
            quantize_dynamic(str(convolutions), str(int8_path), weight_type=QuantType.QInt8,
                             op_types_to_quantize=list(INT8_DYNAMIC_OP_TYPES))
    finally:
        logging.disable(logging.NOTSET)


def reader_config(model, processor, name: str) -> dict:
    """`onnx_config.json`: what the reader needs beside the graph and the vocabulary, each from where textrec
    declares it (the image processor's settings, the model config's ids, `recognize()`'s batching, the sizes and
    contrast under which recognition warns that an image holds no text to read)."""
    return {
        "format": textrec_onnx.FORMAT,
        "format_version": textrec_onnx.FORMAT_VERSION,
        "model": name,
        "decoding": "ctc",
        "inputs": list(INPUT_NAMES),
        "outputs": list(OUTPUT_NAMES),
        "image_processor": processor.image_processor.to_dict(),
        "blank_token_id": model.config.pad_token_id,
        "eos_token_id": model.config.eos_token_id,
        "sort_window_batches": SORT_WINDOW_BATCHES,
        "image_checks": {"min_image_side": MIN_IMAGE_SIDE, "blank_contrast": BLANK_CONTRAST},
        **ctc_search_config(model),
    }


def ctc_search_config(model) -> dict:
    """How the model's `ctc_decode()` searches where it does more than best path (CRNN with `num_beams` above 1 in
    its generation config, with its character n-gram if it has one): `ctc_search`, and `language_model` naming the
    tables' file; nothing for best path."""
    num_beams = (model.generation_config.num_beams or 1) if hasattr(model, "language_model") else 1
    if num_beams <= 1:
        return {}
    special = {model.config.bos_token_id, model.config.eos_token_id, getattr(model.config, "unk_token_id", None)}
    config = {"ctc_search": {
        "num_beams": num_beams,
        "language_model_weight": getattr(model.generation_config, "language_model_weight", 0.0),
        "length_bonus": getattr(model.generation_config, "length_bonus", 0.0),
        "skip_token_ids": sorted(special - {None, model.config.pad_token_id}),
        "line_break_token_ids": sorted(getattr(model.generation_config, "line_break_token_ids", None) or ()),
    }}
    if model.language_model is not None:
        config["language_model"] = {"file": textrec_onnx.LANGUAGE_MODEL_FILE, "order": model.language_model.order,
                                    "vocab_size": model.language_model.vocab_size}
    return config


ONNX_CARD_SECTION = """# {name} (ONNX)

The CTC reading path of `{name}` (encoder and CTC head, {architecture}) in ONNX (opset {opset}), written by
`textrec-export --model {name} --format onnx`: `model.onnx` (fp32) and `model_int8.onnx` (int8: convolutions
calibrated on rendered lines, LSTM and matrix products quantised dynamically), with `textrec_onnx.py`, a reader that
needs only onnxruntime, NumPy and Pillow; with `model.onnx` it gives the text that textrec's own CTC reading gives.

```bash
pip install onnxruntime numpy pillow
python textrec_onnx.py . line1.png line2.png          # --int8: model_int8.onnx
```

```python
from textrec_onnx import OnnxLineReader

reader = OnnxLineReader(".", int8=True, num_threads=1)
print(reader.read(["line1.png", "line2.png"]))
```

Inputs: `pixel_values` float32 `(batch, {channels}, {height}, width)` and `pixel_mask` int64 `(batch, {height}, width)`,
as textrec's image processor makes them (settings in `onnx_config.json`). Outputs: `log_probs` `(batch, columns,
{vocab_size})`, the blank at id {blank}, and `column_mask` `(batch, columns)`.{note}

"""


def write_card(source: Path, output_dir: Path, model, processor, name: str) -> None:
    """The card: an ONNX section on top of the source's card (its metadata with `onnx` among the tags)."""
    from huggingface_hub import ModelCard, ModelCardData

    source_card = source / "README.md"
    card = ModelCard.load(source_card) if source_card.is_file() else ModelCard("---\n---\n")
    data = card.data.to_dict() if card.data else {}
    data["tags"] = [*(data.get("tags") or []), "onnx"]
    data["library_name"] = "onnx"
    preferred = preferred_decoding(model)
    note = ("" if preferred == "ctc" else
            f"\n\n`{name}` was released reading with `{preferred}` decoding; this export reads with its CTC head alone.")
    section = ONNX_CARD_SECTION.format(
        name=name, architecture=type(model).__name__, opset=ONNX_OPSET,
        channels=processor.image_processor.num_channels, height=processor.image_processor.height,
        vocab_size=model.config.vocab_size, blank=model.config.pad_token_id, note=note)
    ModelCard(f"---\n{ModelCardData(**data).to_yaml()}\n---\n\n{section}{card.text.lstrip()}").save(output_dir / "README.md")


def export_onnx(model_name_or_path: str, output_dir: str | Path, overwrite: bool = False, int8: bool = True,
                calibration_images: list | None = None) -> Path:
    """Writes the ONNX folder of `model_name_or_path` (a released line model's short name or a model folder) into
    `output_dir` (see the module's docstring); returns the folder. `int8=False` leaves out `model_int8.onnx`
    (which needs the `onnx` package); `calibration_images` (paths, PIL images or arrays of lines) calibrate its
    convolutions instead of the data engine's renderings (`calibration_lines`).

    Raises:
        FileNotFoundError: no such model.
        ValueError: the model has no CTC head or its processor is not a line processor (`check_exportable`); the
            folder holds files and `overwrite` is not set (`clear_folder_for_export`).
    """
    source = Path(resolve_model_path(model_name_or_path))
    output_dir = Path(output_dir)
    clear_folder_for_export(output_dir, overwrite)
    model, processor = load_recognizer(str(source), dtype=torch.float32)
    name = source.name if source.is_dir() else model_name_or_path
    check_exportable(model, processor, name)
    output_dir.mkdir(parents=True, exist_ok=True)
    write_onnx_model(model, processor, output_dir / textrec_onnx.MODEL_FILE)
    if int8:
        write_int8_model(output_dir / textrec_onnx.MODEL_FILE, output_dir / textrec_onnx.INT8_MODEL_FILE, processor,
                         calibration_images if calibration_images is not None else calibration_lines())
    config = reader_config(model, processor, name)
    (output_dir / textrec_onnx.CONFIG_FILE).write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n")
    processor.tokenizer.backend_tokenizer.save(str(output_dir / textrec_onnx.TOKENIZER_FILE))
    shutil.copyfile(textrec_onnx.__file__, output_dir / READER_FILE)
    shutil.copyfile(Path(luminance.__file__), output_dir / textrec_onnx.LUMINANCE_FILE)
    if "ctc_search" in config:
        shutil.copyfile(Path(ctc_beam_search.__file__), output_dir / textrec_onnx.BEAM_SEARCH_FILE)
    if processor.image_processor.deslant:
        shutil.copyfile(Path(slant_correction.__file__), output_dir / textrec_onnx.SLANT_CORRECTION_FILE)
    if "language_model" in config:
        np.savez(output_dir / textrec_onnx.LANGUAGE_MODEL_FILE,
                 **{name: buffer.float().numpy() if buffer.is_floating_point() else buffer.numpy()
                    for name, buffer in model.language_model.state_dict().items()})
    write_card(source, output_dir, model, processor, name)
    return output_dir
