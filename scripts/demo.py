"""textrec-demo: a web page to read line images with the released models, in a browser.

    pip install "textrec[demo]"        # Gradio, an optional extra
    textrec-demo                       # http://127.0.0.1:7860
    textrec-demo --models crnn-lines trocr-lines --port 8080

Drop an image of one line, pick a released model and a decoding, and read: the page shows the text, the line's
confidence and each character's (`textrec.processing.pipeline_text_recognition` defines them), and a picture of
how the model read: for CTC best path, which frames emitted which character, drawn over the image; for the
sharp-attention decoder, where each step looked (`textrec.processing.attention_readout`). Other attention decoders
get no picture: their cross-attention spans several heads and layers, which no one picture shows faithfully.

`build_demo()` builds the app (a `gradio.Blocks`) for use in a notebook or another server; `write_space()` writes
the demo of one exported model as a Hugging Face Space (`textrec-export --space`).
"""

import argparse
import colorsys
import functools
from pathlib import Path

from textrec.model_cards import DEFAULT_DETECTOR, DEFAULT_RECOGNIZER

from .cli import DEBUG_HELP, run_command

GRADIO_REQUIREMENT = "gradio>=5.0"
"""The Gradio the demo is written for: `pyproject.toml`'s `demo` extra and a Space's `requirements.txt` say it."""
INSTALL_HINT = 'pip install "textrec[demo]"'
EXPORTED_CODE_REQUIREMENTS = ("torch", "transformers", "tokenizers", "pillow", "numpy", "scipy")
"""What an exported folder's code imports where textrec is not installed (a Space's `requirements.txt`, at the
versions textrec's `pyproject.toml` requires): scipy for the image processor's glyph-height scaling (`comer-math`)
and its several-lines warning."""
ELEMENT_IDS = {
    "image": "textrec-image",
    "model": "textrec-model",
    "decoding": "textrec-decoding",
    "read": "textrec-read",
    "text": "textrec-text",
    "confidence": "textrec-confidence",
    "characters": "textrec-characters",
    "picture": "textrec-picture",
    "page": "textrec-page",
}
"""The page's elements by HTML id: what a browser test or a user's script finds them by."""
PICTURE_HEIGHT = 96
"""Height of the line image in the reading picture, in pixels; the labels go below it."""
LABEL_HEIGHT = 22


def import_gradio():
    """The `gradio` module, or an `ImportError` saying how to install it (the demo's optional extra)."""
    try:
        import gradio
    except ImportError as error:
        raise ImportError(f"textrec-demo needs Gradio, an optional extra: {INSTALL_HINT} "
                          f"(or pip install '{GRADIO_REQUIREMENT}')") from error
    return gradio


@functools.lru_cache(maxsize=4)
def cached_recognizer(model_name_or_path: str):
    """`load_recognizer(model_name_or_path)`, loaded once: the demo switches between a few models."""
    from textrec.processing.inference import load_recognizer

    return load_recognizer(model_name_or_path)


UNCERTAIN_BELOW = 0.9
"""Characters read with a confidence below this are marked, with their confidence, in the demo."""


def uncertain_label(confidence: float) -> str | None:
    """The mark of a character in the demo's text: its confidence where it is below `UNCERTAIN_BELOW`, else none."""
    return f"{confidence:.2f}" if confidence < UNCERTAIN_BELOW else None


def character_colour(position: int) -> tuple[int, int, int]:
    """A colour per character position, neighbours far apart on the hue circle."""
    red, green, blue = colorsys.hsv_to_rgb((position * 0.381966) % 1.0, 0.85, 0.9)
    return int(red * 255), int(green * 255), int(blue * 255)


def draw_reading(image, spans: list[tuple[float, float]], labels: list[str], caption: str):
    """The line `image` scaled to `PICTURE_HEIGHT`, each character's span (`(left, right)` as shares of the width)
    shaded in its colour over it, and its label below, centred on the span; `caption` under all."""
    from PIL import Image, ImageDraw, ImageFont

    line = image.convert("RGB")
    width = max(1, round(line.width * PICTURE_HEIGHT / max(line.height, 1)))
    line = line.resize((width, PICTURE_HEIGHT))
    overlay = Image.new("RGBA", line.size, (0, 0, 0, 0))
    draw_overlay = ImageDraw.Draw(overlay)
    picture = Image.new("RGB", (width, PICTURE_HEIGHT + 2 * LABEL_HEIGHT), "white")
    draw = ImageDraw.Draw(picture)
    font = ImageFont.load_default(size=14)
    for position, ((left, right), label) in enumerate(zip(spans, labels)):
        colour = character_colour(position)
        x0, x1 = left * width, max(right * width, left * width + 1)
        draw_overlay.rectangle([x0, 0, x1, PICTURE_HEIGHT - 1], fill=(*colour, 70), outline=(*colour, 255))
        draw.text(((x0 + x1) / 2, PICTURE_HEIGHT + 3), label if label.strip() else "_", fill=colour, font=font, anchor="mt")
    picture.paste(Image.alpha_composite(line.convert("RGBA"), overlay).convert("RGB"), (0, 0))
    draw.text((4, PICTURE_HEIGHT + LABEL_HEIGHT + 3), caption, fill=(90, 90, 90), font=ImageFont.load_default(size=12))
    return picture


def draw_ctc_alignment(image, reading):
    """Which frames emitted which character (`reading.alignment`, a `CTCAlignment`), over the line `image`: frame
    `i` of `n` covers about `[i, i + 1) / n` of the image's width (the encoder's columns, left to right)."""
    alignment = reading.alignment
    frames = max(alignment.frame_count, 1)
    spans = [(start / frames, stop / frames) for start, stop in alignment.character_frames]
    labels = [character for character, _ in reading.characters]
    if len(labels) != len(spans):  # a special token (<unk>) emitted by a frame has a span and no character
        labels = [""] * len(spans)
    return draw_reading(image, spans, labels, f"CTC best path: {alignment.frame_count} frames, "
                                              f"{len(spans)} characters (blank frames unshaded)")


def has_attention_readout(model) -> bool:
    """Whether `textrec.processing.attention_readout` reads `model`: its `forward` returns `attention_weights` (the
    sharp-attention decoder's, one column distribution per step)."""
    import inspect

    output_type = inspect.signature(type(model).forward).return_annotation
    return "attention_weights" in getattr(output_type, "__dataclass_fields__", {})


def draw_attention(image, model, processor):
    """Where each decoding step of a sharp-attention model looked: the span of columns holding half its attention
    around the most attended one, over the line `image`."""
    import numpy as np

    from textrec.processing.attention_readout import read_with_attention

    readout = read_with_attention(model, processor, [image], progress=False)[0]
    columns = readout.attention.shape[1]
    spans, labels = [], []
    for token, weights in zip(readout.tokens, readout.attention):
        if token in processor.tokenizer.all_special_tokens:
            continue
        peak, order = int(np.argmax(weights)), np.argsort(weights)[::-1]
        held = order[: int(np.searchsorted(np.cumsum(weights[order]), 0.5)) + 1]
        left, right = min(held.min(), peak), max(held.max(), peak) + 1
        spans.append((left / columns, right / columns))
        labels.append(token)
    return draw_reading(image, spans, labels, f"attention: the columns holding half of each step's attention ({columns} columns)")


def read_line(image, model_name: str, decoding: str | None = None):
    """Reads one line `image` (a PIL image) with the model `model_name` and `decoding` (None: the model's own).

    Returns:
        `(reading, picture, note)`: the `LineReading` (text, confidence, characters), the picture of how it was read
        (None where there is none) and a note saying why there is none.
    """
    from textrec.processing.inference import recognize
    from textrec.processing.pipeline_text_recognition import preferred_decoding

    model, processor = cached_recognizer(model_name)
    decoding = decoding or preferred_decoding(model)
    reading = recognize(model, processor, [image], decoding=decoding, progress=False, output_confidences=True).readings[0]
    if reading.alignment is not None:
        return reading, draw_ctc_alignment(image, reading), ""
    if decoding == "attention" and has_attention_readout(model):
        return reading, draw_attention(image, model, processor), ""
    return reading, None, (f"No picture for {decoding} decoding of {model_name}: its decoder's cross-attention has "
                           "several heads and layers; the CTC decoding, where the model has one, shows its alignment.")


def read_whole_page(image, model_name: str, decoding: str | None = None, detector_name: str = DEFAULT_DETECTOR):
    """Reads `image` as a page: its lines found by the detector `detector_name`, read by `model_name` in reading order.

    Returns:
        `(reading, picture)`: the `PageReading` and the page with its lines outlined and numbered.
    """
    from textrec.processing.page_reading import draw_page_reading, read_page

    reading = read_page(image, cached_recognizer(model_name), cached_detector(detector_name), decoding=decoding)
    return reading, draw_page_reading(image, reading)


@functools.cache
def cached_detector(model_name_or_path: str):
    """The text-line detector and its image processor, loaded once per process."""
    from textrec.processing.page_reading import load_line_detector

    return load_line_detector(model_name_or_path)


def build_demo(model_names: list[str] | None = None, default_model: str | None = None):
    """The demo app, a `gradio.Blocks`: an image, a model among `model_names` (default: every released model), a
    decoding among that model's `available_decodings`, a read button, and the text, its confidences and the picture
    of how it was read. Launch it with `.launch()`.

    Raises:
        ImportError: Gradio is not installed (`pip install "textrec[demo]"`).
        ValueError: no model to offer, or `default_model` is not among them.
    """
    gradio = import_gradio()
    from textrec.model_cards import released_model_names
    from textrec.processing.pipeline_text_recognition import available_decodings, preferred_decoding

    model_names = list(model_names or released_model_names())
    if not model_names:
        raise ValueError("no model to offer: give model names or folders (no released model is installed)")
    default_model = default_model or (DEFAULT_RECOGNIZER if DEFAULT_RECOGNIZER in model_names else model_names[0])
    if default_model not in model_names:
        raise ValueError(f"default_model {default_model!r} is not among the models offered: {', '.join(model_names)}")

    def decodings_of(model_name: str):
        model, _ = cached_recognizer(model_name)
        return gradio.Dropdown(choices=list(available_decodings(model)), value=preferred_decoding(model))

    def read(image, model_name: str, decoding: str, whole_page: bool):
        if image is None:
            raise gradio.Error("Drop an image of one line (or, with 'whole page', a page) first.")
        if whole_page:
            reading, picture = read_whole_page(image, model_name, decoding)
            lines = [(f"{line.text}\n", uncertain_label(line.confidence)) for line in reading.lines]
            mean = sum(line.confidence for line in reading.lines) / max(len(reading.lines), 1)
            return reading.text, f"{mean:.3f} (mean of {len(reading.lines)} lines)", lines, picture, ""
        reading, picture, note = read_line(image, model_name, decoding)
        characters = [(character, uncertain_label(confidence)) for character, confidence in reading.characters]
        return reading.text, f"{reading.confidence:.3f}", characters, picture, note

    first = decodings_of(default_model)
    with gradio.Blocks(title="textrec: read a line") as demo:
        gradio.Markdown("## textrec: read a line of text\nDrop an image of **one line**, pick a model and a decoding, "
                        "and read. Confidences are probabilities that the line (or the character) is read right.")
        with gradio.Row():
            with gradio.Column():
                image = gradio.Image(type="pil", label="line image", elem_id=ELEMENT_IDS["image"], height=160)
                model = gradio.Dropdown(model_names, value=default_model, label="model", elem_id=ELEMENT_IDS["model"])
                decoding = gradio.Dropdown(first.choices, value=first.value, label="decoding",
                                           elem_id=ELEMENT_IDS["decoding"])
                whole_page = gradio.Checkbox(label="whole page (find its lines with line-detector, read them in order)",
                                             value=False, elem_id=ELEMENT_IDS["page"])
                button = gradio.Button("Read", variant="primary", elem_id=ELEMENT_IDS["read"])
            with gradio.Column():
                text = gradio.Textbox(label="text", elem_id=ELEMENT_IDS["text"], interactive=False)
                confidence = gradio.Textbox(label="line confidence", elem_id=ELEMENT_IDS["confidence"], interactive=False)
                characters = gradio.HighlightedText(label="character confidences", elem_id=ELEMENT_IDS["characters"])
                picture = gradio.Image(label="how it was read", elem_id=ELEMENT_IDS["picture"], interactive=False, height=200)
                note = gradio.Markdown()
        model.change(decodings_of, inputs=model, outputs=decoding)
        button.click(read, inputs=[image, model, decoding, whole_page],
                     outputs=[text, confidence, characters, picture, note])
    return demo


SPACE_APP = '''"""A Hugging Face Space reading line images with the model in this folder (written by `textrec-export --space`).

It needs no textrec: the model, processor and `text-recognition` pipeline load with `trust_remote_code=True` from
the folder's own code files.
"""

from pathlib import Path

import gradio
from transformers import pipeline

TITLE = __TITLE__
FOLDER = Path(__file__).resolve().parent
reader = pipeline("text-recognition", model=str(FOLDER), trust_remote_code=True)
DECODINGS = [name for name, available in (
    ("attention", getattr(reader.model.config, "is_encoder_decoder", False)),
    ("ctc", getattr(reader.model, "ctc_head", None) is not None),
) if available]
DECODINGS += ["joint"] if len(DECODINGS) == 2 else []
PREFERRED = getattr(reader.model.generation_config, "decoding", None) or "attention"
UNCERTAIN_BELOW = __UNCERTAIN_BELOW__


def uncertain_label(confidence):
    return f"{confidence:.2f}" if confidence < UNCERTAIN_BELOW else None


def read(image, decoding):
    if image is None:
        raise gradio.Error("Drop an image of one line of text first.")
    result = reader([image], decoding=decoding, return_confidence=True)[0]
    characters = [(item["character"], uncertain_label(item["confidence"])) for item in result["characters"]]
    return result["generated_text"], f"{result['confidence']:.3f}", characters


with gradio.Blocks(title=TITLE) as demo:
    gradio.Markdown(f"## {TITLE}\\nDrop an image of **one line** and read it. Confidences are probabilities that the "
                    "line (or the character) is read right.")
    with gradio.Row():
        with gradio.Column():
            image = gradio.Image(type="pil", label="line image", height=160)
            decoding = gradio.Dropdown(DECODINGS, value=PREFERRED, label="decoding")
            button = gradio.Button("Read", variant="primary")
        with gradio.Column():
            text = gradio.Textbox(label="text", interactive=False)
            confidence = gradio.Textbox(label="line confidence", interactive=False)
            characters = gradio.HighlightedText(label="character confidences")
    button.click(read, inputs=[image, decoding], outputs=[text, confidence, characters])

if __name__ == "__main__":
    demo.launch()
'''
"""The Space's `app.py` (`__TITLE__` stands for its title, `__UNCERTAIN_BELOW__` for `UNCERTAIN_BELOW`): the demo of
one model, through transformers' pipeline alone."""


def write_space(folder: str | Path, title: str) -> list[Path]:
    """Makes the exported model folder `folder` (`textrec-export`'s output) a Hugging Face Space too: writes
    `app.py` (a Gradio app reading with the folder's `text-recognition` pipeline, textrec not needed; the text,
    the line's and each character's confidence) and `requirements.txt` beside the model's files; returns them.
    The CTC alignment picture needs textrec (`textrec-demo`). `title` heads the page.

    Raises:
        FileNotFoundError: `folder` holds no exported model (no `config.json`).
    """
    from textrec.processing.inference import check_model_folder

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder} holds no exported model (no config.json): export the model there first")
    check_model_folder(folder)
    app = folder / "app.py"
    source = SPACE_APP.replace("__TITLE__", repr(title)).replace("__UNCERTAIN_BELOW__", repr(UNCERTAIN_BELOW))
    app.write_text(source, encoding="utf-8")
    requirements = folder / "requirements.txt"
    requirements.write_text("\n".join([*map(textrec_requirement, EXPORTED_CODE_REQUIREMENTS), GRADIO_REQUIREMENT])
                            + "\n", encoding="utf-8")
    return [app, requirements]


def textrec_requirement(distribution: str) -> str:
    """`distribution` with the versions textrec requires of it (its `pyproject.toml`), e.g. `torch>=2.4,<=2.13.0`."""
    import importlib.metadata
    import re

    for requirement in importlib.metadata.requires("textrec") or []:
        if re.match(rf"{re.escape(distribution)}(?![\w.-])", requirement) and "extra ==" not in requirement:
            return requirement.split(";")[0].strip()
    return distribution


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textrec-demo", description=__doc__.split("\n\n")[0], epilog=DEBUG_HELP)
    parser.add_argument("--models", nargs="+", help="Released model names or model folders to offer (default: every "
                        "released model).")
    parser.add_argument("--default_model", help="The model selected when the page opens (default: "
                        f"{DEFAULT_RECOGNIZER}, else the first offered).")
    parser.add_argument("--host", default="127.0.0.1", help="Address to serve on (0.0.0.0: every network interface).")
    parser.add_argument("--port", type=int, default=7860)
    return parser


def run(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        import_gradio()
    except ImportError as error:
        raise SystemExit(f"textrec-demo: {error}") from None
    demo = build_demo(args.models, args.default_model)
    demo.launch(server_name=args.host, server_port=args.port)


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    run_command("textrec-demo", run, argv)


if __name__ == "__main__":
    main()
