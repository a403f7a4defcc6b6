"""Make the released checkpoints: train (resuming), evaluate and package them into the textrec package.

    python scripts/lab/release.py self-attention-lines                 # train (resuming), evaluate, package
    python scripts/lab/release.py self-attention-lines --package_only  # evaluate and package a finished run

What each release trains and how it is packaged: `scripts/lab/releases.py`.
"""

import argparse
import logging
from pathlib import Path

from releases import RELEASED_MODELS_DIR, RELEASES, get_release, package_release, train_release


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python scripts/lab/release.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+", choices=sorted(RELEASES), help="Releases to make.")
    parser.add_argument("--run_dir", help="Training output folder (default: runs/<name>); one name only.")
    parser.add_argument("--package_only", action="store_true", help="Do not train: package a finished run.")
    parser.add_argument("--destination", type=Path, default=RELEASED_MODELS_DIR,
                        help="Folder of the release folders (default: model_cards/released of this checkout).")
    return parser


def run(argv: list[str] | None = None) -> list[Path]:
    args = build_parser().parse_args(argv)
    if args.run_dir and len(args.names) > 1:
        raise SystemExit("--run_dir goes with one release name.")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    folders = []
    for name in args.names:
        release = get_release(name)
        run_dir = args.run_dir or f"runs/{name}"
        if not args.package_only:
            train_release(release, run_dir)
        folders.append(package_release(release, run_dir, args.destination))
        print(f"{name}: packaged in {folders[-1]}")
    return folders


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    run(argv)


if __name__ == "__main__":
    main()
