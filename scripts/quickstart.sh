#!/usr/bin/env bash
# The main job on a fresh machine: set up, train the self-attention recognizer on synthetic lines for
# a few minutes, report its CER on held-out lines, and read a few sample images.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
RUN=${RUN:-runs/quickstart}
MINUTES=${MINUTES:-5}

textrec-train --model self-attention --preset base --dataset synthetic-lines \
  --max_train_samples 10000 --max_train_minutes "$MINUTES" --max_steps 100000 --lr_scheduler_type constant_with_warmup \
  --eval_steps 100000 --save_steps 500 --output_dir "$RUN"
textrec-evaluate --model "$RUN" --dataset synthetic-lines --split test --num_samples 200
python3 -m textrec.scripts.sample_images --dataset synthetic-lines --num_samples 5 --output_dir "$RUN/samples"
echo "Sample images (true text in $RUN/samples/labels.tsv):"
textrec-recognize --model "$RUN" "$RUN/samples" --show_paths
