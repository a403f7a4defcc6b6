"""textrec-train: train a text recognizer with `Seq2SeqTrainer`.

    textrec-train --model self-attention --preset base --dataset synthetic-lines \
        --max_steps 2000 --output_dir runs/self-attention

Every `Seq2SeqTrainingArguments` option works as in transformers' example scripts
(`--learning_rate`, `--resume_from_checkpoint`, `--push_to_hub`, `--hub_model_id`, ...). An interrupted run
resumes from the last complete checkpoint of its output folder (a kill during the final save included); rerun
on a finished run, the command does nothing and says so (a larger `--max_steps` trains on; `--overwrite_output_dir`
trains afresh). An output folder holding another run or model, or one another training is writing into, is
refused. A run that trains no step, or whose loss or weights become NaN or infinite, fails and saves nothing.
The output folder is ready for the Hub:
weights as safetensors, processor, custom code, generation config and a model card with the evaluation
results. It runs unchanged under `torchrun --nproc_per_node 2` (gloo on CPU). CharBERT pre-training has its
own command, `textrec-pretrain-charbert`.

The work is `textrec.processing.training.train_from_arguments`; this command parses its arguments.
"""

import sys

from .cli import run_command, set_up_training_logs


def run(argv: list[str] | None = None) -> dict:
    """Trains as the arguments say; returns the final evaluation metrics."""
    from textrec.processing.training import parse_arguments, train_from_arguments

    model_args, data_args, training_args = parse_arguments(sys.argv[1:] if argv is None else argv)
    set_up_training_logs(training_args)
    return train_from_arguments(model_args, data_args, training_args)


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    run_command("textrec-train", run, argv, cache_help=True,
                on_interrupt="the checkpoints saved in --output_dir are kept: run the same command again to resume "
                "from the last one")


if __name__ == "__main__":
    main()
