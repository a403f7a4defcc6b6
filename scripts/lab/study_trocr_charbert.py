"""Study: does CharBERT's correction help a TrOCR that reads? The thesis's protocol on two CPU cores: plain TrOCR
against the TrOCR–CharBERT composite with each tensor combine, all fine-tuned alike from the same trained TrOCR, read
greedily and with beam search.

    python scripts/lab/study_trocr_charbert.py --trocr trocr-lines \
        --output_dir runs/trocr-charbert-study --session_minutes 150

`--lines` picks the study's lines:

- `synthetic` (default): handwriting-style font lines rendered by textrec, fine-tuning on `TRAIN_LINES`, early
  stopping on validation lines, `--num_test` held-out test lines.
- `washington`: the thesis's own dataset, George Washington's letters (`../shared/data/real/handwriting/test`,
  subset `gw`), split by page as the fine-tuning curve splits them (`washington_finetuning.py`): the 317 lines of
  pages 270-279 fine-tune every system (captured copies of them, `COPIES` each) for `--max_steps` steps, with no
  evaluation during training (no page is left to stop on without reading the test pages), and the 166 lines of pages
  300-304 are the test lines. `--trocr` should read handwriting (a TrOCR trained on IAM-OnDB's training lines); its
  confusions are measured on the training pages, and CharBERT's corpus adds IAM-OnDB's 9,112 training
  transcriptions (real English) to `--corpus`.

Phases, each resumable (a finished phase is skipped; an unfinished training resumes from its checkpoint), so the
study may span sessions: `--session_minutes` bounds the training time of one invocation, and `--carry_dir`
keeps the finished phases (the numbers, the confusion matrix, CharBERT) in the repository for the next checkout.

1. The starting TrOCR (`--trocr`: a released name such as `trocr-lines`, or a `--model trocr` folder) reads the
   held-out handwriting-style test lines with its decoder: the comparison is only meaningful if it reads
   (the issue's bar: CER under 10%).
2. Its confusion matrix on `--confusion_samples` validation lines (`confusion.json`; Washington: the training pages).
3. CharBERT pre-trained on `--corpus` (Debian's fortunes) with MLM and the noisy LM, the noise drawn from that
   confusion matrix (`textrec-pretrain-charbert`'s path), `--charbert_steps` steps. Its NLM correction accuracy is
   reported beside the best constant answer (the most frequent original word among the corrupted ones).
4. Fine-tuning, one textrec-train run per system from the same start: `trocr` is the starting TrOCR with its CTC
   head removed (so that every system learns from the same cross-entropy), `trocr-charbert-<combine>` is
   `from_trocr_and_charbert(TrOCR, CharBERT, combine, frozen_modules)`. The same data in the same order, AdamW with
   a warm-up then a constant rate, the parts `--frozen_in_every_system` frozen in all (the line encoder by
   default: the systems differ in their decoders), an evaluation every `--eval_steps` and early stopping on the
   validation CER (`--patience`), at most `--max_steps`, under bf16 autocast where the CPU has it natively
   (`--bf16`; a results file of systems fine-tuned otherwise is refused).
5. Every fine-tuned system (and the start) reads `--num_test` held-out lines greedily and with beam search of
   `--num_beams`: CER, WER, the share of lines beam search changes, lines per second. `results.md` has the table
   beside the thesis's numbers (George Washington: TrOCR CER 4.78 / WER 14.44, the best composite 5.88 / 12.84),
   `results.json` every number, `predictions.json` the texts.
"""

import argparse
import json
import logging
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from transformers import AutoProcessor

from textrec.modeling import TrOCRCharBertForTextRecognition, TrOCRForTextRecognition
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.confusion import ConfusionMatrix
from textrec.processing.inference import check_model_source, load_recognizer, recognize
from textrec.processing.metrics import evaluate_texts
from textrec.processing.metrics.exprate import token_edit_distance
from textrec.processing.training import charbert as charbert_pretraining
from textrec.processing.training.trainer import cpu_has_native_bf16

from real_sets import REAL_DATA_DIR
from washington_finetuning import COPIES, TEST_PAGES, TRAIN_PAGES, washington_lines, write_split_folder

from staged_training import (
    CARRY_DIR_HELP, Stage, carry_run, remove_checkpoints, restore_run, run_finished, run_summary, session_deadline,
    train_stages,
)

logger = logging.getLogger("textrec.study")

PLAIN = "trocr"
COMBINES = ("add", "mean", "linear", "conv")
SYSTEMS = (PLAIN, *(f"trocr-charbert-{combine}" for combine in COMBINES))
START = "start (no fine-tuning)"
PLATEAU_METRIC = "cer"
TRAIN_LINES = "synthetic-lines-handwriting:max_chars=80"
HELD_OUT_LINES = "synthetic-lines-handwriting:min_chars=15,max_chars=80,augment=false"
THESIS = {
    # George Washington, the thesis's table: CER and WER (%) of fine-tuned TrOCR and of the best composite.
    PLAIN: (4.78, 14.44),
    "best composite": (5.88, 12.84),
}
LINE_SETS = ("synthetic", "washington")
BOOTSTRAP_SAMPLES = 2000
READABLE_CER = 0.10
"""The issue's bar for a TrOCR that reads: a held-out CER under 10% before the comparison."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trocr", default="trocr-lines", help="Released name or folder of a --model trocr checkpoint.")
    parser.add_argument("--output_dir", default="runs/trocr-charbert-study")
    parser.add_argument("--lines", choices=LINE_SETS, default="synthetic",
                        help="The study's lines: textrec's handwriting-style renderings, or George Washington's letters "
                        "(see the module docstring).")
    parser.add_argument("--systems", nargs="*", choices=SYSTEMS, default=list(SYSTEMS),
                        help="Systems this invocation fine-tunes (none: phases 1-3 only). Invocations with disjoint "
                        "systems may run side by side once CharBERT is pre-trained; they share results.json.")
    parser.add_argument("--frozen_modules", nargs="*", default=["charbert"],
                        help="Parts of the composites not fine-tuned (TrOCRCharBertConfig.frozen_modules).")
    parser.add_argument("--frozen_in_every_system", nargs="*", default=["encoder"],
                        help="Parts frozen in all five fine-tunings alike (textrec-train --freeze_modules; they run in "
                        "eval mode): by default the shared line encoder, whose fine-tuning without the CTC signal it "
                        "was trained with knocked the start off its minimum.")
    parser.add_argument("--corpus", nargs="+", default=["/usr/share/games/fortunes"], help="CharBERT's pre-training text.")
    parser.add_argument("--charbert_preset", default="small")
    parser.add_argument("--charbert_steps", type=int, default=3000)
    parser.add_argument("--charbert_arguments", default="--vocab_size=4000 --word_vocab_size=5000 --max_seq_length=64 "
                        "--learning_rate=1e-3 --warmup_steps=200 --per_device_train_batch_size=32 "
                        """--config_overrides='{"char_rnn_scope": "token"}'""",
                        help="More textrec-pretrain-charbert arguments (by default the per-token character GRU that "
                        "the corrector runs, causal, in the composite).")
    parser.add_argument("--confusion_samples", type=int, default=1000)
    parser.add_argument("--num_train", type=int, default=40_000, help="Fine-tuning lines.")
    parser.add_argument("--num_validation", type=int, default=200)
    parser.add_argument("--num_test", type=int, default=1000,
                        help="Held-out test lines of --lines synthetic (200 left the paired intervals about 2 CER "
                        "points wide); Washington's test pages hold 166.")
    parser.add_argument("--max_steps", type=int, default=1500, help="Most fine-tuning steps per system (1,500 steps of 32 "
                        "lines: 1.2 passes over --num_train; a composite's step costs 2.5x plain TrOCR's).")
    parser.add_argument("--eval_steps", type=int, default=250)
    parser.add_argument("--patience", type=int, default=4, help="Evaluations without a lower validation CER that end a run.")
    parser.add_argument("--learning_rate", type=float, default=5e-5,
                        help="AdamW's rate after the warm-up (2e-4 knocked the start off its minimum, encoder frozen or not).")
    parser.add_argument("--warmup_steps", type=int, default=100)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--num_beams", type=int, default=4)
    parser.add_argument("--session_minutes", type=float, default=150.0, help="Training time of this invocation.")
    parser.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=cpu_has_native_bf16(),
                        help="bfloat16 autocast in fine-tuning, the same for every system (default: where the CPU has "
                        "native bfloat16, which makes a composite's step 1.8x faster; elsewhere it is emulated and "
                        "slower). The test readings are in fp32 either way.")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output_markdown", type=Path, default=None,
                        help="Also write the report (the table, the command, CharBERT's numbers) here, as results.md.")
    parser.add_argument("--carry_dir", type=Path, default=None,
                        help=CARRY_DIR_HELP + " Here: results.json, the confusion matrix and CharBERT (its pre-training "
                        "resumes); a fine-tuning run unfinished at the session's end starts again (a composite's "
                        "optimizer state is over 100 MB).")
    return parser


CARRIED_FILES = ("results.json", "confusion.json")
"""What the study carries besides CharBERT's run: the finished phases' numbers."""


def carry_study(output_dir: Path, carry_dir: Path) -> None:
    """Copies what the next session's checkout needs to go on to `carry_dir` (see `--carry_dir`)."""
    carry_dir.mkdir(parents=True, exist_ok=True)
    carry_run(output_dir / "charbert", carry_dir / "charbert")
    for name in CARRIED_FILES:
        if (output_dir / name).exists():
            shutil.copy2(output_dir / name, carry_dir / name)


@dataclass
class StudyLines:
    """The lines of one study: what fine-tunes the systems, what stops them, what they are measured on, and what the
    starting TrOCR's confusions and CharBERT's corpus come from."""

    train: str
    """Dataset of the fine-tuning lines (`textrec-train --dataset`)."""
    evaluation: tuple[str, str]
    """Dataset and split textrec-train's evaluation reads (`--eval_dataset`, `--eval_split`)."""
    early_stopping: bool
    """Whether that evaluation's CER stops a fine-tuning early; else every system trains `--max_steps` steps and
    it is read once, at the end, for the card."""
    test_images: list
    test_references: list[str]
    confusion_images: list
    confusion_references: list[str]
    corpus: list[str]
    """CharBERT's pre-training text: files or folders."""


def open_images(rows: list[dict]) -> list[Image.Image]:
    images = []
    for row in rows:
        with Image.open(row["path"]) as image:
            images.append(image.convert("L"))
    return images


def study_lines(args, output_dir: Path, data_dir: Path = REAL_DATA_DIR) -> StudyLines:
    """The lines `--lines` names (see the module docstring); Washington's and IAM-OnDB's from `data_dir`."""
    if args.lines == "synthetic":
        test = load_text_recognition_dataset(HELD_OUT_LINES, split="test", num_samples=args.num_test, seed=args.seed)
        confusion = load_text_recognition_dataset(HELD_OUT_LINES, split="validation", num_samples=args.confusion_samples,
                                                  seed=args.seed)
        return StudyLines(TRAIN_LINES, (HELD_OUT_LINES, "validation"), True, list(test["image"]), list(test["text"]),
                          list(confusion["image"]), list(confusion["text"]), list(args.corpus))
    train_rows, test_rows = washington_lines(TRAIN_PAGES, data_dir), washington_lines(TEST_PAGES, data_dir)
    train_folder = write_split_folder(train_rows, output_dir / "washington-train")
    iam_ondb_text = output_dir / "iam-ondb-train.txt"
    if not iam_ondb_text.exists():
        train_metadata = data_dir / "handwriting" / "train" / "metadata.jsonl"
        texts = [json.loads(line)["text"] for line in train_metadata.read_text().splitlines() if line.strip()]
        iam_ondb_text.write_text("\n".join(texts) + "\n")
    # No page is left to stop on without reading the test pages: the card's evaluation reads the training pages.
    return StudyLines(f"captured:{train_folder}:copies={COPIES}", (str(train_folder), "train"), False, open_images(test_rows),
                      [row["text"] for row in test_rows], open_images(train_rows), [row["text"] for row in train_rows],
                      [*args.corpus, str(iam_ondb_text)])


def read(model_dir: str, args, images: list, references: list[str]) -> dict:
    """Greedy and beam-search readings of the held-out lines with the decoder (`generate()`)."""
    model, processor = load_recognizer(model_dir)
    readings = {}
    for name, num_beams in (("greedy", 1), ("beam", args.num_beams)):
        result = recognize(model, processor, images, batch_size=32, num_beams=num_beams, decoding="attention")
        readings[name] = {**evaluate_texts(result.texts, references), "lines_per_second": result.lines_per_second,
                          "texts": result.texts}
    greedy, beam = readings["greedy"]["texts"], readings["beam"]["texts"]
    readings["beam_changed"] = sum(a != b for a, b in zip(greedy, beam)) / len(references)
    readings["parameters"] = model.num_parameters()
    return readings


def build_confusions(trocr: str, lines: StudyLines, path: Path) -> None:
    model, processor = load_recognizer(trocr)
    result = recognize(model, processor, lines.confusion_images, batch_size=32, decoding="attention")
    ConfusionMatrix.from_texts(lines.confusion_references, result.texts).save(path)


def pretrain_charbert(args, corpus: list[str], confusions: Path, output_dir: Path, minutes: float) -> None:
    arguments = [
        f"--preset={args.charbert_preset}", "--corpus", *corpus, f"--confusion_matrix={confusions}",
        f"--max_steps={args.charbert_steps}", f"--max_train_minutes={minutes}", f"--output_dir={output_dir}",
        "--eval_steps=500", "--save_steps=500", "--save_total_limit=2", "--logging_steps=100", "--disable_tqdm=true",
        f"--seed={args.seed}", *shlex.split(args.charbert_arguments),
    ]
    charbert_pretraining.pretrain(*charbert_pretraining.parse_arguments(arguments))


def charbert_summary(output_dir: Path) -> dict:
    """The pre-training's held-out numbers, with the best constant answer to the noisy LM for comparison."""
    results = json.loads((output_dir / charbert_pretraining.RESULTS_FILE).read_text())
    return {"steps": results["steps"], **{key: results["after"][key] for key in
            ("mlm_accuracy", "nlm_accuracy", "nlm_majority_accuracy", "nlm_words")}}


def prepare_start(system: str, trocr: str, charbert: Path, args, folder: Path) -> None:
    """The system's starting model and the TrOCR's processor in `folder`."""
    if system == PLAIN:
        model = TrOCRForTextRecognition.from_pretrained(trocr, dtype=torch.float32)  # a release is stored in fp16
        model.config.ctc_loss_weight = 0.0
        model.ctc_head = None
    else:
        model = TrOCRCharBertForTextRecognition.from_trocr_and_charbert(
            trocr, str(charbert), combine=system.rsplit("-", 1)[1], frozen_modules=args.frozen_modules
        )
    model.generation_config.decoding = "attention"  # neither has a CTC head
    model.save_pretrained(folder)
    AutoProcessor.from_pretrained(trocr).save_pretrained(folder)


def finetune_arguments(args, lines: StudyLines, run_dir: Path, start: Path, stage: Stage, previous: Path | None,
                       minutes: float) -> list[str]:
    dataset, split = lines.evaluation
    evaluation = dict(eval_dataset=dataset, eval_split=split, max_eval_samples=args.num_validation)
    if lines.early_stopping:
        evaluation.update(eval_steps=args.eval_steps, early_stopping_patience=args.patience,
                          metric_for_best_model=PLATEAU_METRIC)
    else:
        evaluation.update(eval_strategy="no")
    arguments = dict(
        model_name_or_path=str(start),
        dataset=stage.dataset,
        max_train_samples=args.num_train,
        **evaluation,
        max_target_length=96,
        max_image_width=1024,
        learning_rate=args.learning_rate,
        warmup_steps=args.warmup_steps,
        lr_scheduler_type="constant_with_warmup",
        max_steps=stage.max_steps,
        max_train_minutes=minutes,
        per_device_train_batch_size=args.batch_size,
        save_steps=args.eval_steps,
        save_total_limit=2,
        logging_steps=50,
        generation_num_beams=1,
        disable_tqdm=True,
        output_dir=str(run_dir / stage.name),
        seed=args.seed,
        data_seed=args.seed,
        bf16=args.bf16,
        use_cpu=True,
    )
    frozen = ["--freeze_modules", *args.frozen_in_every_system] if args.frozen_in_every_system else []
    return [f"--{key}={value}" for key, value in arguments.items()] + frozen


def percent(value: float) -> str:
    return f"{100 * value:.2f}%"


def error_rate_difference(texts: list[str], baseline_texts: list[str], references: list[str], unit: str,
                          seed: int = 0) -> str:
    """The error rate (`unit`: "char" for CER, "word" for WER) of `texts` minus that of `baseline_texts`, in
    points, with a 95% paired bootstrap interval (the held-out lines resampled, both systems' edits on the same
    lines)."""
    split = list if unit == "char" else str.split
    edits = np.array([[token_edit_distance(split(text), split(reference)) for text, reference in zip(system, references)]
                      for system in (texts, baseline_texts)])
    lengths = np.array([len(split(reference)) for reference in references])
    samples = np.random.default_rng(seed).integers(len(references), size=(BOOTSTRAP_SAMPLES, len(references)))
    differences = (edits[0][samples].sum(axis=1) - edits[1][samples].sum(axis=1)) / lengths[samples].sum(axis=1)
    low, high = np.percentile(differences, [2.5, 97.5])
    return f"{100 * (edits[0].sum() - edits[1].sum()) / lengths.sum():+.2f} ({100 * low:+.2f} to {100 * high:+.2f})"


def results_table(start: dict, systems: dict, references: list[str], args) -> str:
    lines = [
        f"| system | parameters | fine-tuning steps (best at) | CER greedy | WER greedy | vs fine-tuned TrOCR, greedy: "
        f"CER, WER points (95% CI) | CER beam {args.num_beams} | WER beam {args.num_beams} | lines changed by beam | "
        "lines/s greedy | thesis (GW): CER / WER |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    ordered = {START: start, **{name: systems[name] for name in SYSTEMS if name in systems}}
    for name, record in ordered.items():
        greedy, beam = record["reading"]["greedy"], record["reading"]["beam"]
        versus = ""
        if PLAIN in systems and name != PLAIN:
            versus = "; ".join(
                error_rate_difference(greedy["texts"], systems[PLAIN]["reading"]["greedy"]["texts"], references, unit)
                for unit in ("char", "word")
            )
        training = record.get("training")
        steps = f"{training['training_steps']:,}" if training else "0"
        if training and training["best"]:
            steps += f" ({training['best']['step']:,})"
        thesis = THESIS.get(name)
        lines.append(
            f"| {name} | {record['reading']['parameters'] / 1e6:.2f}M | {steps} | {percent(greedy['cer'])} | "
            f"{percent(greedy['wer'])} | {versus} | {percent(beam['cer'])} | {percent(beam['wer'])} | "
            f"{percent(record['reading']['beam_changed'])} | {greedy['lines_per_second']:.1f} | "
            f"{f'{thesis[0]:.2f}% / {thesis[1]:.2f}%' if thesis else ''} |"
        )
    return "\n".join(lines)


def run(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    if args.threads:
        torch.set_num_threads(args.threads)
    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    if args.carry_dir:
        restore_run(args.carry_dir, output_dir)
    deadline = session_deadline(args.session_minutes)
    trocr = check_model_source(args.trocr)
    lines = study_lines(args, output_dir)
    images, references = lines.test_images, lines.test_references
    results_file = output_dir / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {"systems": {}}
    lines_read = len(results["start"]["reading"]["greedy"]["texts"]) if "start" in results else len(references)
    if lines_read != len(references):
        raise ValueError(f"{results_file} holds readings of {lines_read} test lines, not --num_test {len(references)}: "
                         "give another --output_dir, or the same --num_test.")
    for name, record in results["systems"].items():
        if (record["bf16"], record["max_steps"]) != (args.bf16, args.max_steps):
            raise ValueError(f"{name} in {results_file} was fine-tuned with bf16={record['bf16']} and at most "
                             f"{record['max_steps']} steps, not bf16={args.bf16} and --max_steps {args.max_steps}: "
                             "every system is fine-tuned alike; give another --output_dir, or the same options.")

    def save() -> None:
        # Another invocation may have finished other systems since this one started: keep theirs.
        if results_file.exists():
            results["systems"] = {**json.loads(results_file.read_text())["systems"], **results["systems"]}
        results_file.write_text(json.dumps(results, indent=1))

    if "start" not in results:
        logger.info("Phase 1: the starting TrOCR (%s) reads %d held-out lines", args.trocr, len(images))
        results["start"] = {"reading": read(trocr, args, images, references)}
        save()
    start_cer = results["start"]["reading"]["greedy"]["cer"]
    if args.lines == "synthetic" and start_cer >= READABLE_CER:
        logger.warning("The starting TrOCR reads at %.1f%% CER, not under %.0f%%: the comparison would not be meaningful",
                       100 * start_cer, 100 * READABLE_CER)

    confusions = output_dir / "confusion.json"
    if not confusions.exists():
        logger.info("Phase 2: the starting TrOCR's confusion matrix on %d lines", len(lines.confusion_references))
        build_confusions(trocr, lines, confusions)

    charbert_dir = output_dir / "charbert"
    unfinished = []
    if "charbert" not in results:
        logger.info("Phase 3: pre-training CharBERT with the TrOCR's confusions")
        minutes = (deadline - time.monotonic()) / 60
        if minutes > 0:
            pretrain_charbert(args, lines.corpus, confusions, charbert_dir, minutes)
        if (charbert_dir / charbert_pretraining.RESULTS_FILE).exists() and charbert_summary(charbert_dir)["steps"] >= args.charbert_steps:
            results["charbert"] = charbert_summary(charbert_dir)
            remove_checkpoints(charbert_dir)  # pre-trained: nothing resumes it, and its carry is the model alone
            save()
        else:
            unfinished.append("charbert")

    stage = Stage("finetune", lines.train, args.max_steps, final=True)
    for system in args.systems if "charbert" in results else []:
        run_dir = output_dir / system
        if system in results["systems"]:
            continue
        start = run_dir / "start"
        if not (start / "config.json").exists():
            prepare_start(system, trocr, charbert_dir, args, start)
        finished = run_finished(run_dir, [stage], args.patience, PLATEAU_METRIC) or train_stages(
            run_dir, [stage], lambda s, previous, minutes: finetune_arguments(args, lines, run_dir, start, s, previous, minutes),
            deadline, args.patience, PLATEAU_METRIC,
        )
        if not finished:
            unfinished.append(system)
            continue
        logger.info("Phase 5: %s reads %d held-out lines", system, len(images))
        results["systems"][system] = {
            "bf16": args.bf16,
            "max_steps": args.max_steps,
            "training": run_summary(run_dir, [stage], PLATEAU_METRIC),
            "reading": read(str(run_dir / stage.name), args, images, references),
        }
        save()

    save()  # and take in the systems other invocations finished
    predictions = {"references": references, **{
        name: {way: record["reading"][way]["texts"] for way in ("greedy", "beam")}
        for name, record in {START: results["start"], **results["systems"]}.items()
    }}
    (output_dir / "predictions.json").write_text(json.dumps(predictions, indent=1))
    command = "python scripts/lab/study_trocr_charbert.py " + shlex.join(argv)
    report = [results_table(results["start"], results["systems"], references, args), "", f"Command: `{command}`", "",
              f"Fine-tuning: at most {args.max_steps:,} steps of {args.batch_size} lines, bf16 autocast "
              f"{'on' if args.bf16 else 'off'}; the test readings in fp32."]
    if "charbert" in results:
        c = results["charbert"]
        report += ["", f"CharBERT ({args.charbert_preset}, {c['steps']:,} steps): NLM correction accuracy "
                   f"{percent(c['nlm_accuracy'])} of {c['nlm_words']:,} corrupted held-out words, against "
                   f"{percent(c['nlm_majority_accuracy'])} for always answering the most frequent original word; "
                   f"masked-token accuracy {percent(c['mlm_accuracy'])}."]
    if unfinished:
        report += ["", f"Still training (run the command again to go on): {', '.join(unfinished)}"]
    (output_dir / "results.md").write_text("\n".join(report) + "\n")
    if args.output_markdown:
        args.output_markdown.write_text("\n".join(report) + "\n")
    if args.carry_dir:
        carry_study(output_dir, args.carry_dir)
    print("\n".join(report))
    return results


def main(argv: list[str] | None = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
