#!/usr/bin/env bash
# The main job on a fresh machine: set up; read a few lines with the released self-attention-lines model;
# measure its CER and speed beside Tesseract on fresh held-out lines; then fine-tune it for a few minutes with
# Seq2SeqTrainer on a folder (metadata.jsonl layout) of what it has never seen, strings of real handwritten
# MNIST digits (scikit-learn's 8x8 digits where MNIST is not there, which it says), and report CER before and
# after. Every figure it prints is measured by this run.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== 0. Setting up (scripts/setup.sh): Debian packages, torch, textrec; some minutes on a fresh machine"
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
RUN=${RUN:-runs/quickstart}
MODEL=${MODEL:-self-attention-lines}
FINETUNE_STEPS=${FINETUNE_STEPS:-150}
HELD_OUT="min_chars=15,max_chars=80,augment=false"
# MNIST's IDX files (in a checkout beside ../shared: ../shared/data/mnist); without them, scikit-learn's 8x8 digits stand in.
MNIST_DIR=${MNIST_DIR:-../shared/data/mnist}
DIGITS="mnist-digits:length=8"
if [ -d "$MNIST_DIR" ]; then
  DIGITS="$DIGITS,mnist_dir=$(cd "$MNIST_DIR" && pwd)"
  DIGITS_NAME="MNIST digits"
  DIGITS_SOURCE="MNIST's handwritten digits ($MNIST_DIR)"
else
  DIGITS_NAME="scikit-learn's 8x8 digits"
  DIGITS_SOURCE="scikit-learn's 8x8 handwritten digits: MNIST is not at $MNIST_DIR (set MNIST_DIR to a folder of its IDX files to use it); README gives the figures on both"
fi
mkdir -p "$RUN"

echo
echo "== 1. $MODEL reads five held-out print lines rendered by textrec (synthetic-lines:$HELD_OUT; expected | read)"
python3 -m textrec.scripts.sample_images --dataset "synthetic-lines:$HELD_OUT" --num_samples 5 \
  --output_dir "$RUN/samples" 2>/dev/null
textrec-recognize --model "$MODEL" "$RUN/samples" > "$RUN/samples/recognized.txt"
paste -d '|' <(cut -f2 "$RUN/samples/labels.tsv") "$RUN/samples/recognized.txt"

echo
echo "== 2. $MODEL beside Tesseract on 200 fresh held-out lines of 15-80 characters, per font style, rendered by"
echo "   textrec (synthetic-lines and synthetic-lines-handwriting:$HELD_OUT)"
for dataset in synthetic-lines synthetic-lines-handwriting; do
  textrec-evaluate --model "$MODEL" --dataset "$dataset:$HELD_OUT" --split test --num_samples 200 \
    --compare_tesseract --show_errors 1 2>/dev/null
done

echo
echo "== 3. Fine-tuning $MODEL for $FINETUNE_STEPS steps on a folder of strings of 8 handwritten digits"
echo "   digits: $DIGITS_SOURCE"
DATA="$RUN/digit-strings"
echo "   writing 3,000 training, 100 validation and 200 test strings ($DIGITS)..."
for split_size in train:3000 validation:100 test:200; do
  python3 -m textrec.scripts.sample_images --dataset "$DIGITS" --split "${split_size%%:*}" \
    --num_samples "${split_size##*:}" --output_dir "$DATA/${split_size%%:*}" 2>/dev/null
done
echo "   $DATA/{train,validation,test}/metadata.jsonl written"
textrec-evaluate --model "$MODEL" --dataset "$DATA" --split test --num_samples 200 --show_errors 2 \
  --output_json "$RUN/before.json" 2>/dev/null
rm -rf "$RUN/finetuned"
echo "   fine-tuning (a few minutes on 2 CPU cores; the loss every 25 steps)..."
textrec-train --model self-attention --model_name_or_path "$MODEL" --dataset "$DATA" \
  --max_steps "$FINETUNE_STEPS" --learning_rate 3e-4 --warmup_steps 10 --per_device_train_batch_size 32 \
  --eval_steps 100000 --save_steps 100000 --max_eval_samples 100 --logging_steps 25 --disable_tqdm true \
  --output_dir "$RUN/finetuned" 2>&1 | grep -E "^\{'loss'|train_runtime" || true
textrec-evaluate --model "$RUN/finetuned" --dataset "$DATA" --split test --num_samples 200 --show_errors 2 \
  --output_json "$RUN/after.json" 2>/dev/null
python3 - "$RUN" "$DIGITS_NAME" <<'PY'
import json, sys
before, after = (json.load(open(f"{sys.argv[1]}/{name}.json")) for name in ("before", "after"))
print(f"   CER on the folder's test split ({sys.argv[2]}): {before['cer']:.2%} before fine-tuning, {after['cer']:.2%} after")
PY
