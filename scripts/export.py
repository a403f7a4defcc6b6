"""textrec-export: write a Hub-ready folder from a released model or a training output folder.

    textrec-export --model self-attention-lines --output_dir hub/self-attention-lines
    textrec-export --model runs/self-attention --output_dir hub/my-model --push_to_hub --hub_model_id me/my-model

The folder holds the safetensors weights, `config.json` (with `auto_map` and the `text-recognition` custom
pipeline), the generation config, tokenizer and processor files, the code files they import, and the model
card (`README.md`, with its evaluation results as `model-index` metadata) of the source. It loads with
`AutoModelForImageTextToText.from_pretrained(folder, trust_remote_code=True)` where textrec is not installed.
"""

import argparse
import tempfile
from pathlib import Path

from textrec.model_cards.hub import DTYPES, export_model

from .cli import run_command

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textrec-export", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="A released model's name (e.g. self-attention-lines) or a "
                        "training output folder.")
    parser.add_argument("--output_dir", required=True, help="The folder to write.")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32",
                        help="Weights' type in the folder (default float32, what CPUs run fastest).")
    parser.add_argument("--overwrite_output_dir", action="store_true", help="Replace an earlier export in "
                        "--output_dir (its code, settings, weights and card); without it a folder holding files is refused.")
    parser.add_argument("--push_to_hub", action="store_true", help="Upload the folder to the Hub (needs a network "
                        "and a token, e.g. from `hf auth login`).")
    parser.add_argument("--hub_model_id", help="Repository for --push_to_hub, as user/name.")
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
    check_output_dir(args.output_dir)
    folder = export_model(args.model, args.output_dir, args.dtype, overwrite=args.overwrite_output_dir)
    print(f"Hub folder written to {folder}")
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
