"""Where each system's character errors on the real line sets come from: one table of CER points by kind of error.

    python scripts/lab/benchmark_real_data.py --sets receipts historic-print --peers Tesseract RapidOCR \
        --output_json runs/real_data_development.json
    python scripts/lab/error_breakdown.py --predictions runs/real_data_development.json \
        --output_markdown scripts/lab/results/error_breakdown.md

Reads the predictions a `benchmark_real_data.py` run wrote (`--output_json`), scores them again under each set's
protocol (`real_sets.py`: the same normalisation and alignment as the benchmark's CER) and splits every system's
character edits by what they touch:

- spaces: a space added or left out, or read for a mark (labels that keep or drop spaces);
- marks: punctuation and symbols only, on both sides of the edit;
- letters and digits: an edit touching a letter or digit;
- lines under 50% read: every edit of a line whose own CER is 50% or more (a crop holding other text than its
  label, a line not read at all), counted here and not under the kinds above.

The points of a row add up to its CER. The most frequent substitutions follow the table (a few characters each, not
the data's lines). The data stay in `../shared`: the table holds counts only.
"""

import argparse
import json
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import jiwer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_sets import ALL_SETS, REAL_DATA_DIR, load_real_set  # noqa: E402

from textrec.processing.metrics.error_rate import CHARACTERS_AS_GIVEN  # noqa: E402
from textrec.processing.metrics.text_normalization import normalize_texts  # noqa: E402

KINDS = ("spaces", "marks", "letters and digits", "lines under 50% read")
UNREAD_LINE_CER = 0.5
"""A line whose own CER is at least this is counted whole under "lines under 50% read"."""
TOP_SUBSTITUTIONS = 8


def is_mark(character: str) -> bool:
    return unicodedata.category(character)[0] in "PS"


def kind_of(reference: str, hypothesis: str) -> str:
    """The kind of one edit, `reference` read as `hypothesis` (either may be empty)."""
    touched = reference + hypothesis
    if set(touched) <= {" "}:
        return "spaces"
    if " " in touched and not any(character.isalnum() for character in touched):
        return "spaces"
    if all(is_mark(character) or character == " " for character in touched):
        return "marks"
    return "letters and digits"


def break_down(references: list[str], hypotheses: list[str]) -> dict:
    """CER points by kind and the commonest substitutions of `hypotheses` against `references` (normalised)."""
    edits, substitutions = Counter(), Counter()
    total_characters = sum(len(reference) for reference in references)
    for reference, hypothesis in zip(references, hypotheses):
        if not hypothesis:  # nothing read: every character left out
            edits["lines under 50% read"] += len(reference)
            continue
        if not reference:  # text read where the label holds none: every character added
            for character in hypothesis:
                edits[kind_of(character, "")] += 1
            continue
        output = jiwer.process_characters(reference, hypothesis, reference_transform=CHARACTERS_AS_GIVEN,
                                          hypothesis_transform=CHARACTERS_AS_GIVEN)  # as textrec's CER: unstripped
        line_edits = output.substitutions + output.deletions + output.insertions
        if line_edits / len(reference) >= UNREAD_LINE_CER:
            edits["lines under 50% read"] += line_edits
            continue
        for chunk in output.alignments[0]:
            if chunk.type == "equal":
                continue
            read = reference[chunk.ref_start_idx:chunk.ref_end_idx]
            written = hypothesis[chunk.hyp_start_idx:chunk.hyp_end_idx]
            if chunk.type == "substitute":
                for old, new in zip(read, written):
                    edits[kind_of(old, new)] += 1
                    substitutions[old, new] += 1
            else:
                for character in read or written:
                    edits[kind_of(character, "")] += 1
    points = {kind: edits[kind] / max(total_characters, 1) for kind in KINDS}
    return {"cer": sum(points.values()), "points": points, "characters": total_characters,
            "substitutions": substitutions.most_common(TOP_SUBSTITUTIONS)}


def render(rows: list[tuple[str, str, dict]], command: str, split: str) -> str:
    lines = [f"Character errors on the real {split} line sets by kind, in CER points, `{command}`", "",
             "| system | set | CER | " + " | ".join(KINDS) + " | commonest substitutions (label -> read) |",
             "|---|---|---|" + "---|" * len(KINDS) + "---|"]
    for system, set_name, result in rows:
        common = ", ".join(f"`{old}`->`{new}` {count}" for (old, new), count in result["substitutions"])
        lines.append(f"| {system} | {set_name} | {result['cer']:.2%} | "
                     + " | ".join(f"{result['points'][kind]:.2%}" for kind in KINDS) + f" | {common} |")
    lines += ["", "The kinds: a space added or left out, or read for a mark; punctuation and symbols only; an edit touching a "
              "letter or digit; every edit of a line whose own CER is at least 50% (counted there alone). Each row's "
              "points add up to its CER."]
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--predictions", type=Path, required=True, help="A benchmark_real_data.py --output_json file.")
    parser.add_argument("--split", choices=("development", "held-out"), default="development",
                        help="The split the predictions were read on.")
    parser.add_argument("--data_dir", type=Path, default=REAL_DATA_DIR)
    parser.add_argument("--output_markdown", type=Path, default=None)
    return parser


def run(argv: list[str] | None = None) -> list[tuple[str, str, dict]]:
    args = build_parser().parse_args(argv)
    if not args.data_dir.is_dir():
        raise SystemExit(f"{args.data_dir} is not there: the real sets live in ../shared (see real_sets.py).")
    systems = json.loads(args.predictions.read_text())
    rows = []
    for system in systems:
        for set_name, scores in system["scores"].items():
            real_set = ALL_SETS[set_name]
            _, references = load_real_set(set_name, args.split, args.data_dir)
            if len(references) != len(scores["predictions"]):
                raise SystemExit(f"{args.predictions}: {len(scores['predictions'])} predictions for {set_name}'s "
                                 f"{len(references)} {args.split} lines; was it read on another split?")
            normalized = [normalize_texts(texts, real_set.normalization, real_set.charset)
                          for texts in (scores["predictions"], references)]
            rows.append((system["system"], set_name, break_down(normalized[1], normalized[0])))
    command = "python scripts/lab/error_breakdown.py " + " ".join(argv if argv is not None else sys.argv[1:])
    table = render(rows, command, args.split)
    print(table)
    if args.output_markdown:
        args.output_markdown.write_text(table)
    return rows


if __name__ == "__main__":
    run()
