"""Study: plain TrOCR against the TrOCR–CharBERT composite (each tensor combine), trained from scratch on
the same line data under the same CPU budget, read with `generate()`.

    python -m textrec.scripts.benchmarks.study_trocr_charbert --cpu_minutes 5 --output_dir runs/trocr-charbert-study

Every system has the same ViT encoder and TrOCR decoder (sizes of `TrOCRCharBertConfig`'s `--preset`,
the same initial weights for those parts: both are built from the same seed in the same order); the
composites add the CharBERT corrector with the `add`, `mean`, `linear` or `conv` combine. Pretrained
TrOCR and CharBERT weights cannot be downloaded here, so everything starts from scratch.

Phases (each logs a line; loops show progress bars):
1. Data: synthetic print lines (`--dataset`), split `train` (augmented) for training and split `test`
   (clean) for reading; labels longer than `--max_target_length` are dropped.
2. Training, one system after the other: AdamW with a linear warm-up then a constant learning rate,
   the same batches in the same order, stopped when the process has used `--cpu_minutes` of CPU time
   (`TimeBudgetCallback`, clock "cpu"; run it on an otherwise quiet machine).
3. Reading the test lines with `generate()`: greedy (CER/WER, lines per second) and beam search of
   `--num_beams` (CER/WER, and the share of lines whose text differs from greedy's: the thesis's question
   whether beam search output changes with the corrector present).
4. A markdown table (printed, `table.md`), every number in `results.json`, predictions in
   `predictions.json`.
"""

import argparse
import json
import logging
import time
from pathlib import Path

import torch
from transformers import TrOCRForCausalLM, ViTModel, VisionEncoderDecoderModel

from textrec.modeling import TrOCRCharBertConfig, TrOCRCharBertForTextRecognition
from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor, build_char_tokenizer
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.collator import check_labels
from textrec.processing.inference import recognize
from textrec.processing.metrics import evaluate_texts
from textrec.processing.training import TextrecTrainingArguments, special_token_ids, train
from textrec.processing.training.architectures import TROCR_LINE_IMAGES, TROCR_LINE_SIZE

logger = logging.getLogger("textrec.study")

PLAIN = "trocr"
COMBINES = ("add", "mean", "linear", "conv")
SYSTEMS = (PLAIN, *(f"trocr-charbert-{combine}" for combine in COMBINES))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu_minutes", type=float, default=5.0, help="CPU-time budget of each system's training.")
    parser.add_argument("--output_dir", default="runs/trocr-charbert-study")
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    parser.add_argument("--preset", choices=sorted(TrOCRCharBertConfig.PRESETS), default="base")
    parser.add_argument("--dataset", default="synthetic-lines", help="Line data, as textrec-train's --dataset.")
    parser.add_argument("--max_chars", type=int, default=40, help="Longest synthetic line in characters.")
    parser.add_argument("--image_width", type=int, default=TROCR_LINE_SIZE["image_width"], help="Width every line is resized to.")
    parser.add_argument("--train_samples", type=int, default=20_000)
    parser.add_argument("--test_samples", type=int, default=200)
    parser.add_argument("--max_target_length", type=int, default=48, help="Longest label in tokens (eos included).")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-4)
    parser.add_argument("--warmup_steps", type=int, default=100)
    parser.add_argument("--num_beams", type=int, default=4)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's).")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def build_processor(args) -> TextRecognitionProcessor:
    """Lines resized to the systems' input size (`TROCR_LINE_SIZE`'s height, `--image_width`), as textrec-train
    reads it from a new trocr-charbert model's configuration."""
    image_processor = TextRecognitionImageProcessor(
        **TROCR_LINE_IMAGES, height=TROCR_LINE_SIZE["image_height"], width=args.image_width
    )
    return TextRecognitionProcessor(image_processor, build_char_tokenizer(), max_label_length=args.max_target_length)


def composite_config(args, processor, combine: str) -> TrOCRCharBertConfig:
    tokenizer = processor.tokenizer
    return TrOCRCharBertConfig.from_preset(
        args.preset,
        vocab_size=len(tokenizer),
        image_height=TROCR_LINE_SIZE["image_height"],
        image_width=args.image_width,
        max_target_length=args.max_target_length,
        **special_token_ids(tokenizer),
        combine=combine,
    )


def build_system(name: str, args, processor):
    """A new model of the study; the encoder and TrOCR decoder come first from the same seed in every system."""
    config = composite_config(args, processor, "add" if name == PLAIN else name.rsplit("-", 1)[1])
    torch.manual_seed(args.seed)
    if name != PLAIN:
        return TrOCRCharBertForTextRecognition(config)
    encoder = ViTModel(config.encoder, add_pooling_layer=False)
    decoder = TrOCRForCausalLM(config.decoder.trocr)
    model = VisionEncoderDecoderModel(encoder=encoder, decoder=decoder)
    for token in ("decoder_start_token_id", "pad_token_id", "eos_token_id"):
        setattr(model.config, token, getattr(config, token))
    model.generation_config.decoder_start_token_id = config.decoder_start_token_id
    model.generation_config.pad_token_id = config.pad_token_id
    model.generation_config.eos_token_id = config.eos_token_id
    model.generation_config.max_new_tokens = config.max_target_length
    return model


def train_system(model, name: str, args, processor, train_dataset, output_dir: Path) -> dict:
    """Trains one system through textrec's `train` for the study's CPU budget (no evaluation during training:
    the study reads its test lines afterwards)."""
    training_args = TextrecTrainingArguments(
        output_dir=str(output_dir / name),
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        warmup_steps=args.warmup_steps,
        lr_scheduler_type="constant_with_warmup",
        max_steps=1_000_000,  # the CPU budget stops training
        max_train_cpu_minutes=args.cpu_minutes,
        logging_steps=50,
        save_strategy="no",
        eval_strategy="no",
        report_to=[],
        seed=args.seed,
        data_seed=args.seed,
        use_cpu=True,
        remove_unused_columns=False,
        dataloader_num_workers=0,
    )
    start = time.perf_counter()
    card_details = dict(
        architecture=name,
        architecture_description=f"The {name} system of the TrOCR-CharBERT study.",
        dataset_name=args.dataset,
        dataset_split="test",
        eval_samples=None,
    )
    train(model, processor, train_dataset, None, training_args, card_details=card_details)
    state = json.loads((Path(training_args.output_dir) / "trainer_state.json").read_text())
    losses = [entry["loss"] for entry in state["log_history"] if "loss" in entry]
    return {
        "steps": state["global_step"],
        "wall_minutes": (time.perf_counter() - start) / 60,
        "final_logged_loss": losses[-1] if losses else None,
        "parameters": model.num_parameters(),
    }


def read(model, processor, images, references, num_beams: int) -> tuple[dict, list[str]]:
    result = recognize(model, processor, images, batch_size=32, num_beams=num_beams)
    scores = evaluate_texts(result.texts, references)
    scores["lines_per_second"] = result.lines_per_second
    return scores, result.texts


def render_table(results: dict, args) -> str:
    lines = [
        (
            f"| system | parameters | steps in {args.cpu_minutes:g} CPU min | CER greedy | WER greedy | "
            f"CER beam {args.num_beams} | WER beam {args.num_beams} | lines changed by beam | lines/s greedy |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, record in results.items():
        greedy, beam = record["greedy"], record["beam"]
        lines.append(
            f"| {name} | {record['training']['parameters'] / 1e6:.2f}M | {record['training']['steps']} | "
            f"{greedy['cer']:.1%} | {greedy['wer']:.1%} | {beam['cer']:.1%} | {beam['wer']:.1%} | "
            f"{record['beam_changed']:.1%} | {greedy['lines_per_second']:.1f} |"
        )
    return "\n".join(lines)


def run(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    if args.threads:
        torch.set_num_threads(args.threads)
    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    processor = build_processor(args)

    logger.info("Phase 1: data (%d training lines, %d test lines)", args.train_samples, args.test_samples)
    lines = dict(max_chars=args.max_chars) if args.dataset.startswith("synthetic-lines") else {}
    train_dataset = load_text_recognition_dataset(
        args.dataset, split="train", num_samples=args.train_samples, seed=args.seed, **lines
    )
    clean = dict(lines, augment=False) if lines else {}
    test_dataset = load_text_recognition_dataset(
        args.dataset, split="test", num_samples=args.test_samples, seed=args.seed, **clean
    )
    train_dataset = check_labels(train_dataset, processor, args.max_target_length, "train")
    test_dataset = check_labels(test_dataset, processor, args.max_target_length, "test")
    images, references = list(test_dataset["image"]), list(test_dataset["text"])

    results, predictions = {}, {"references": references}
    for name in args.systems:
        logger.info("Phase 2: training %s for %.1f CPU minutes", name, args.cpu_minutes)
        model = build_system(name, args, processor)
        training = train_system(model, name, args, processor, train_dataset, output_dir)
        model.eval()
        logger.info("Phase 3: reading %d test lines with %s", len(images), name)
        greedy, greedy_texts = read(model, processor, images, references, num_beams=1)
        beam, beam_texts = read(model, processor, images, references, num_beams=args.num_beams)
        changed = sum(a != b for a, b in zip(greedy_texts, beam_texts)) / len(images)
        results[name] = {"training": training, "greedy": greedy, "beam": beam, "beam_changed": changed}
        predictions[name] = {"greedy": greedy_texts, "beam": beam_texts}
        (output_dir / "results.json").write_text(json.dumps({"arguments": vars(args), "results": results}, indent=2))
        (output_dir / "predictions.json").write_text(json.dumps(predictions, indent=1))

    table = render_table(results, args)
    (output_dir / "table.md").write_text(table + "\n")
    print(table)
    return results


def main(argv: list[str] | None = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
