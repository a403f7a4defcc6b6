"""textrec-export: write a Hub-ready folder from a released model or a training output folder, or its ONNX reading path.

    textrec-export --model self-attention-lines --output_dir hub/self-attention-lines
    textrec-export --model runs/self-attention --output_dir hub/my-model --push_to_hub --hub_model_id me/my-model
    textrec-export --model crnn-lines --format onnx --output_dir onnx/crnn-lines

The folder holds the safetensors weights, `config.json` (with `auto_map` and the `text-recognition` custom
pipeline), the generation config, tokenizer and processor files, the code files they import, and the model
card (`README.md`, with its evaluation results as `model-index` metadata) of the source. It loads with
`AutoModelForImageTextToText.from_pretrained(folder, trust_remote_code=True)` where textrec is not installed.

`--format onnx` writes instead the CTC reading path of a line model (encoder and CTC head) as `model.onnx` and
`model_int8.onnx`, with a reader that needs only onnxruntime, NumPy and Pillow (`textrec.processing.onnx_export`).
torch, transformers and textrec's library are imported when the command runs, not for `--help`.
"""

import argparse
import tempfile
from pathlib import Path

from .cli import DEBUG_HELP, run_command

DTYPES = ("bfloat16", "float16", "float32")
"""The weights' types a Hub folder can store (torch dtypes of these names)."""
FORMATS = ("hub", "onnx")

TRAINING_RUN_FILES = ("_textrec_run.json", "trainer_state.json", "training_args.bin", "all_results.json")
"""What a training run leaves at the top of its output folder (textrec's run record, the Trainer's files)."""


def check_not_a_training_run(folder: Path) -> None:
    """Refuses to export into a training run's output folder: the export would replace its trained model beside
    its checkpoints and records."""
    if not folder.is_dir():
        return
    found = [name for name in TRAINING_RUN_FILES if (folder / name).exists()]
    found += sorted(path.name for path in folder.glob("checkpoint-*") if path.is_dir())[:1]
    if found:
        raise ValueError(f"--output_dir {folder} is a training run's folder ({', '.join(found)}): exporting into it "
                         "would replace its trained model. Choose another --output_dir.")


def check_output_folder(folder: Path, overwrite: bool) -> None:
    """Refuses a folder that holds files, unless `overwrite` and they are an earlier export's (Hub or ONNX: its code,
    settings, weights and card are then removed, so that no file of another model stays beside the new one); a
    training run's folder is refused either way (`check_not_a_training_run`), and so is a folder holding anything
    else (`clear_folder_for_export`)."""
    from textrec.model_cards.hub import clear_folder_for_export

    check_not_a_training_run(folder)
    clear_folder_for_export(folder, overwrite)


def export_model(model_name_or_path: str, output_dir: str | Path, dtype: str = "float32", overwrite: bool = False,
                 hub_model_id: str | None = None) -> Path:
    """Writes the Hub folder of `model_name_or_path` (a released model's short name or a folder) into
    `output_dir`, with weights stored in `dtype`; returns the folder. Its `config.json` says `"dtype": "float32"`
    whatever `dtype` is: it loads and computes in fp32 (`stored_state_dict`). The source's card comes along with its
    example image, its snippets loading `hub_model_id` (`<user>/<name>` and a note when None). A folder holding files
    is refused unless `overwrite` (`check_output_folder`)."""
    import torch

    from textrec.model_cards import resolve_model_path
    from textrec.model_cards.hub import copy_model_card, export_for_hub
    from textrec.processing.inference import load_recognizer

    source = Path(resolve_model_path(model_name_or_path))
    if not source.is_dir():
        raise FileNotFoundError(f"No such model folder or released name: {model_name_or_path}")
    output_dir = Path(output_dir)
    if output_dir.resolve() == source.resolve():
        raise ValueError("--output_dir must differ from the model's own folder.")
    check_output_folder(output_dir, overwrite)
    if is_line_detector(source):
        from textrec.model_cards.hub import stored_state_dict
        from textrec.processing.page_reading import load_line_detector

        model, processor = load_line_detector(str(source))
        model.save_pretrained(output_dir, state_dict=stored_state_dict(model, getattr(torch, dtype)))
        processor.save_pretrained(output_dir)  # with the model: its code files, for AutoModel and AutoImageProcessor
    else:
        model, processor = load_recognizer(str(source), dtype=torch.float32)
        export_for_hub(model, processor, output_dir, weights_dtype=getattr(torch, dtype))
    copy_model_card(source, output_dir, hub_model_id)
    return output_dir


def is_line_detector(folder: Path) -> bool:
    """Whether the model folder holds a text-line detector (its configuration's `model_type`)."""
    import json

    from textrec.modeling import LineDetectorConfig

    config = folder / "config.json"
    return config.is_file() and json.loads(config.read_text(encoding="utf-8")).get("model_type") == LineDetectorConfig.model_type


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textrec-export", description=__doc__.split("\n\n")[0], epilog=DEBUG_HELP)
    parser.add_argument("--model", required=True, help="A released model's name (e.g. self-attention-lines) or a "
                        "training output folder.")
    parser.add_argument("--output_dir", required=True, help="The folder to write.")
    parser.add_argument("--format", choices=FORMATS, default="hub",
                        help="hub: a Hub folder for transformers (default); onnx: the CTC reading path of a line model "
                        "(encoder + CTC head) as model.onnx and model_int8.onnx, with a reader needing only onnxruntime, "
                        "NumPy and Pillow (pip install 'textrec[onnx]' to export).")
    parser.add_argument("--dtype", choices=DTYPES, default="float32",
                        help="Weights' type in a Hub folder (default float32, what CPUs run fastest).")
    parser.add_argument("--overwrite_output_dir", action="store_true", help="Replace an earlier export in "
                        "--output_dir (its code, settings, weights and card); without it a folder holding files is refused.")
    parser.add_argument("--push_to_hub", action="store_true", help="Upload the folder to the Hub (needs a network "
                        "and a token, e.g. from `hf auth login`).")
    parser.add_argument("--hub_model_id", help="The Hub repository, as user/name: the card's snippets load it, and "
                        "--push_to_hub uploads there (without it the card says <user>/<name>).")
    parser.add_argument("--space", action="store_true", help="Also write app.py and requirements.txt beside the "
                        "model: the folder is then a Hugging Face Space reading with it (textrec.scripts.demo.write_space).")
    return parser


def check_output_dir(output_dir: str) -> None:
    """Refuses, before the model is loaded, an `--output_dir` where the folder cannot be written: the folder if it
    exists, else the nearest existing folder above it, must take a new folder (made and removed again)."""
    base = Path(output_dir).absolute()
    while not base.exists() and base != base.parent:
        base = base.parent
    try:
        tempfile.TemporaryDirectory(dir=base, prefix=".write-test-").cleanup()
    except OSError as error:
        raise PermissionError(f"--output_dir {output_dir}: cannot write into {base} ({error.strerror or error})") from None


def run(argv: list[str] | None = None) -> Path:
    args = build_parser().parse_args(argv)
    if args.push_to_hub and not args.hub_model_id:
        raise SystemExit("textrec-export: --push_to_hub needs --hub_model_id user/name")
    if args.format == "onnx" and args.dtype != "float32":
        raise SystemExit("textrec-export: --dtype applies to Hub folders; --format onnx writes fp32 and int8 models")
    check_output_dir(args.output_dir)
    if args.format == "onnx":
        from textrec.model_cards import resolve_model_path
        from textrec.processing.onnx_export import export_onnx

        source = Path(resolve_model_path(args.model))
        if source.is_dir() and is_line_detector(source):
            raise SystemExit(f"textrec-export: --format onnx exports text recognizers; {args.model} is a text-line "
                             "detector: export it as a Hub folder (without --format onnx)")

        check_not_a_training_run(Path(args.output_dir))
        folder = export_onnx(args.model, args.output_dir, overwrite=args.overwrite_output_dir)
        print(f"ONNX folder written to {folder}")
    else:
        folder = export_model(args.model, args.output_dir, args.dtype, overwrite=args.overwrite_output_dir,
                              hub_model_id=args.hub_model_id)
        print(f"Hub folder written to {folder}")
    if args.space:
        from .demo import write_space

        print(f"Space files written: {', '.join(str(path) for path in write_space(folder, Path(args.model).name))}")
    if args.push_to_hub:
        from huggingface_hub import HfApi

        api = HfApi()
        api.create_repo(args.hub_model_id, exist_ok=True)
        api.upload_folder(repo_id=args.hub_model_id, folder_path=str(folder))
        print(f"Pushed to https://huggingface.co/{args.hub_model_id}")
    return folder


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    run_command("textrec-export", run, argv)


if __name__ == "__main__":
    main()
