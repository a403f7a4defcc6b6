"""Package a trained text-line detector as the released `line-detector`: fp16 weights, its image processor, its
code files (it loads with `AutoModel` / `AutoImageProcessor` and `trust_remote_code=True` where textrec is not
installed) and its card, with the real-page results of `benchmark_pages.py`.

    python scripts/lab/release_line_detector.py --run_dir runs/line-detector-v2 \
        --pages_json scripts/lab/results/pages_development.json --pages_markdown scripts/lab/results/pages.md

With `--card_only` the released weights stay and only the card's real-page results are written anew (after a change
of the page reader or of `crnn-lines`):

    python scripts/lab/release_line_detector.py --card_only \
        --pages_json scripts/lab/results/pages_development.json --pages_markdown scripts/lab/results/pages.md
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

import torch
from huggingface_hub import ModelCard, ModelCardData

from textrec.model_cards.hub import stored_state_dict
from textrec.processing.page_reading import load_line_detector

RELEASED = Path(__file__).resolve().parents[2] / "model_cards" / "released" / "line-detector"
RELEASED_SECOND_STAGE_STEPS = 1000
"""The steps of the released detector's second stage (its run's `trainer_state.json`), for `--card_only`."""
TRAINING_COMMANDS = (
    "textrec-train-line-detector --seed 0 --num_train_pages 2400 --num_eval_pages 100 --crop_size 448 "
    "--per_device_train_batch_size 8 --learning_rate 2e-3 --warmup_steps 100 --max_steps 1200 "
    "--eval_steps 400 --save_steps 200 --logging_steps 50 --max_train_minutes 60 "
    "--output_dir runs/line-detector   # the first release, on pages of format 1 (textrec commit 8eb836e)",
    "textrec-train-line-detector --model_name_or_path line-detector --seed 0 --num_train_pages 2400 "
    "--num_eval_pages 100 --render_num_proc 1 --crop_size 448 --per_device_train_batch_size 8 --learning_rate 1e-3 "
    "--warmup_steps 50 --max_steps 1000 --eval_steps 250 --save_steps 250 --logging_steps 50 --max_train_minutes 50 "
    "--output_dir runs/line-detector-v2   # from the first release, on pages of format 2",
)
"""The commands that trained the release, in order (`setup.sh --release_fonts` installed the fonts its pages are
drawn with; the second names the first release, as it was installed then)."""

CARD = """
# line-detector

textrec's text-line detector: it finds the lines of a page (boxes, 4-point polygons for skewed lines, a score
each), for a line recognizer to read them in reading order (`textrec-recognize --page`,
`textrec.processing.page_reading.read_page`). A small fully convolutional network ({parameters} parameters: five
convolution stages and a feature pyramid) marks each line's core, the middle band of its height (DBNet's shrunk
text kernels, Liao et al., AAAI 2020); the image processor's `post_process_line_detection` expands each core back
to its line. A page is scaled to 1,280 pixels on its longer side; light text on dark is inverted first.

## Use

```python
import torch
from PIL import Image, ImageOps
from transformers import AutoImageProcessor, AutoModel

model = AutoModel.from_pretrained("{repo}", trust_remote_code=True).eval()
processor = AutoImageProcessor.from_pretrained("{repo}", trust_remote_code=True)
page = ImageOps.exif_transpose(Image.open("page.png"))  # a phone photo upright, as the processor reads it
with torch.no_grad():
    outputs = model(**processor.preprocess([page], return_tensors="pt"))
lines = processor.post_process_line_detection(outputs, target_sizes=[(page.height, page.width)])[0]
print(lines["boxes"], lines["polygons"], lines["scores"])
```

With textrec: `textrec-recognize --model crnn-lines --page page.png` prints the page's text in reading order
(`--output_format json` or `hocr` for boxes and confidences).

## Training

- Data: {train_pages:,} pages rendered by textrec's data engine (`textrec.processing.data.synthetic_pages`): books,
  newspapers of two to five columns, receipts and forms, with headings, rules, Fraktur (German) pages, skew,
  scanner effects, photographed pages and light on dark; then {train_pages:,} pages of its second format, which
  adds the verso's print showing through, dust and foxing, and denser, smaller newspaper print; no real image.
- Training: 1,200 steps of `Trainer`, random 448-pixel crops in batches of 8, AdamW, learning rate 2e-3 (cosine),
  binary cross-entropy plus Dice loss on the line cores; then {steps:,} steps from there at 1e-3 on the second
  format's pages. Commands:

```bash
{commands}
```

A page of small print (its line pitch, measured by the image processor, under 13 pixels at 1,280) is detected at
the size that brings its pitch to 20 pixels (`longest_edge_for`, at most 4,096 pixels on the longer side).

## Results on real pages

Real pages of `../shared/data/real/pages` (SROIE receipts, FUNSD forms, OCR-D German book print, Neue Zürcher
Zeitung newspaper pages; the development part), read with `crnn-lines` (the OCR-D pages with `--old_umlauts`, as their ground truth writes old umlauts) beside Tesseract
5.3.0's page mode (its German Fraktur model on the OCR-D and NZZ pages). Precision and recall:
the reader's output lines against the pages' printed lines, matched one to one at an intersection over union of
at least 0.5.

{table}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run_dir", default="runs/line-detector")
    parser.add_argument("--pages_json", required=True, help="benchmark_pages.py --output_json, read with this detector")
    parser.add_argument("--pages_markdown", required=True, help="benchmark_pages.py --output_markdown")
    parser.add_argument("--destination", type=Path, default=RELEASED)
    parser.add_argument("--card_only", action="store_true",
                        help="Keep the released weights in --destination; write only its card, with these results.")
    args = parser.parse_args()

    rows = json.loads(Path(args.pages_json).read_text())
    if args.card_only:
        model, _ = load_line_detector(str(args.destination))
        steps = RELEASED_SECOND_STAGE_STEPS
    else:
        model, processor = load_line_detector(args.run_dir)
        steps = json.loads((Path(args.run_dir) / "trainer_state.json").read_text())["global_step"]
        if args.destination.exists():
            shutil.rmtree(args.destination)
        args.destination.mkdir(parents=True)
        model.save_pretrained(args.destination, state_dict=stored_state_dict(model, torch.float16))
        processor.save_pretrained(args.destination)
        for code in args.destination.glob("*.py"):  # a release's code is textrec's own; textrec-export copies it out
            code.unlink()
    matched = sum(row["matched"] for row in rows)
    detected, lines = sum(row["detected"] for row in rows), sum(row["lines"] for row in rows)
    cer = sum(row["errors"] for row in rows) / sum(row["chars"] for row in rows)
    data = ModelCardData(
        library_name="transformers", pipeline_tag="object-detection", license="apache-2.0",
        tags=["textrec", "ocr", "text-line-detection", "custom_code"],
        model_name="line-detector",
        eval_results=None,
    ).to_dict()
    data["model-index"] = [{"name": "line-detector", "results": [{
        "task": {"type": "object-detection", "name": "Text-line detection"},
        "dataset": {"name": "Real pages: SROIE receipts, FUNSD forms, OCR-D book print, NZZ (development part)",
                    "type": "real-pages"},
        "metrics": [{"type": "precision", "value": round(100 * matched / max(detected, 1), 2), "name": "line precision (IoU 0.5)"},
                    {"type": "recall", "value": round(100 * matched / max(lines, 1), 2), "name": "line recall (IoU 0.5)"},
                    {"type": "cer", "value": round(100 * cer, 2), "name": "page CER with crnn-lines"}],
    }]}]
    body = CARD.format(parameters=f"{model.num_parameters():,}", repo="line-detector",
                       train_pages=2400, steps=steps, commands="\n".join(TRAINING_COMMANDS),
                       table=Path(args.pages_markdown).read_text(encoding="utf-8").strip())
    ModelCard(f"---\n{ModelCardData(**data).to_yaml()}\n---\n{body}").save(args.destination / "README.md")
    print(f"line-detector: packaged in {args.destination}", file=sys.stderr)


if __name__ == "__main__":
    main()
