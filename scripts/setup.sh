#!/usr/bin/env bash
# Sets textrec up on a fresh Debian machine: fonts for the synthetic data, Tesseract (the benchmark's
# peer), Debian's fortunes texts (English and German), Chromium (the demo's browser test), the local CPU build
# of PyTorch, and textrec itself with its test, demo and onnx extras, into the active python3 (a virtual environment when one is active).
#
#   bash scripts/setup.sh           # textrec editable, from this checkout (for development)
#   bash scripts/setup.sh --wheel   # textrec from a wheel built from this checkout, as users get it (CI)
#   bash scripts/setup.sh --release_fonts   # also the ~60 font packages (about 800 print fonts) that the data
#                                           # engine's release trainings render with (`look=captured`)
set -euo pipefail
cd "$(dirname "$0")/.."
INSTALL=editable
RELEASE_FONTS=no
for argument in "$@"; do
  case "$argument" in
    --wheel) INSTALL=wheel ;;
    --release_fonts) RELEASE_FONTS=yes ;;
    *) echo "setup.sh: unknown option $argument (known: --wheel, --release_fonts)" >&2; exit 2 ;;
  esac
done

DEBIAN_PACKAGES=(
  # print fonts
  fonts-dejavu-core fonts-dejavu-extra fonts-liberation fonts-liberation2 fonts-freefont-ttf
  fonts-urw-base35 fonts-texgyre fonts-crosextra-carlito fonts-crosextra-caladea fonts-roboto-unhinted
  fonts-open-sans fonts-lato fonts-go fonts-hack fonts-inconsolata fonts-linuxlibertine fonts-ebgaramond
  fonts-cantarell
  # handwriting-style fonts
  fonts-dkg-handwriting fonts-breip fonts-dancingscript fonts-kristi fonts-comic-neue fonts-humor-sans
  # text corpora (English; German for the German print lines) and the OCR peer (with its German Fraktur model,
  # which the real-data benchmark reads the historic print with)
  fortunes fortunes-min fortunes-de tesseract-ocr tesseract-ocr-eng tesseract-ocr-script-frak
  # the browser that the demo's test drives (tests/test_demo.py)
  chromium
)
# Serif, sans, mono, condensed, display, bitmap-like and old-style faces for the data engine; fonts missing a
# glyph of the character set are dropped when the data is rendered (textrec.processing.data.fonts).
RELEASE_FONT_PACKAGES=(
  fonts-adf-accanthis fonts-adf-baskervald fonts-adf-berenis fonts-adf-gillius fonts-adf-ikarius
  fonts-adf-irianis fonts-adf-libris fonts-adf-mekanus fonts-adf-oldania fonts-adf-romande fonts-adf-solothurn
  fonts-adf-switzera fonts-adf-tribun fonts-adf-universalis fonts-adf-verana fonts-anonymous-pro
  fonts-averia-gwf fonts-averia-sans-gwf fonts-averia-serif-gwf fonts-bebas-neue fonts-beteckna fonts-cmu
  fonts-comfortaa fonts-courier-prime fonts-dustin fonts-firacode fonts-freefont-otf fonts-gfs-neohellenic
  fonts-goudybookletter fonts-inter fonts-jetbrains-mono fonts-junicode fonts-jura fonts-league-mono
  fonts-league-spartan fonts-manrope fonts-mononoki fonts-croscore fonts-noto-core fonts-noto-mono fonts-oxygen
  fonts-quicksand fonts-roboto-slab fonts-sil-gentiumplus fonts-sil-charis fonts-sil-andika
  fonts-ebgaramond-extra fonts-cabin fonts-fantasque-sans fonts-hermit fonts-fanwood fonts-lindenhill
  fonts-prociono fonts-sil-gentium fonts-yanone-kaffeesatz fonts-lobstertwo fonts-mplus
  fonts-play fonts-sora fonts-spleen fonts-stix fonts-tuffy fonts-vollkorn
  fonts-blankenburg fonts-oflb-asana-math
)
[ "$RELEASE_FONTS" = yes ] && DEBIAN_PACKAGES+=("${RELEASE_FONT_PACKAGES[@]}")
# 19th-century Fraktur faces that Debian does not package (SIL Open Font License), from Fontsource's npm packages:
# package@version:weights. Their Latin subsets are merged into TrueType files (textrec.processing.data.fonts).
WEB_FRAKTUR_FONTS=(unifrakturmaguntia@5.3.0:400 unifrakturcook@5.3.0:700 grenze-gotisch@5.3.0:400,700)
WEB_FONTS_DIR=/usr/local/share/fonts/textrec-web-fraktur
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if command -v apt-get >/dev/null; then
  missing=()
  for package in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${#missing[@]} Debian packages (fonts, fortunes, Tesseract)..."
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "setup: no apt-get; install the fonts, fortunes and tesseract-ocr by hand (see scripts/setup.sh)" >&2
fi

PYTHON=${PYTHON:-python3}
# The CPU wheel of torch 2.13.0 lies on these machines; asking for exactly it keeps pip from pulling a
# newer build with several GB of CUDA libraries.
echo "setup: installing torch 2.13.0 (CPU)..."
"$PYTHON" -m pip install -q "torch==2.13.0"
echo "setup: building textrec ($INSTALL) and installing its dependencies..."
if [ "$INSTALL" = wheel ]; then
  # Built from a clean copy of the checkout: setuptools reuses its build/ folder, so a wheel built in place
  # would carry files since deleted from the source (and the build would write into the checkout).
  wheels=$(mktemp -d)
  mkdir "$wheels/source"
  tar -c --exclude=./.git --exclude=./build --exclude=./dist --exclude='*.egg-info' --exclude=__pycache__ \
    --exclude=./.pytest_cache --exclude=./runs --exclude=./outputs --exclude=./.cache -f - . \
    | tar -x -C "$wheels/source" -f -
  "$PYTHON" -m pip wheel -q --no-deps -w "$wheels" "$wheels/source"
  # pip keeps an installed textrec of the same version (editable or an earlier wheel) unless it is removed.
  if "$PYTHON" -m pip show -q textrec 2>/dev/null; then "$PYTHON" -m pip uninstall -q -y textrec; fi
  "$PYTHON" -m pip install -q "$(ls "$wheels"/textrec-*.whl)[test,demo,onnx,fonts,pdf]"
  rm -rf "$wheels"
else
  "$PYTHON" -m pip install -q -e ".[test,demo,onnx,fonts,pdf]"
fi
if [ "$RELEASE_FONTS" = yes ] && [ ! -d "$WEB_FONTS_DIR" ]; then
  if command -v npm >/dev/null; then
    echo "setup: fetching ${#WEB_FRAKTUR_FONTS[@]} Fraktur fonts from npm (Fontsource)..."
    packs=$(mktemp -d)
    for entry in "${WEB_FRAKTUR_FONTS[@]}"; do
      package=${entry%%:*}
      (cd "$packs" && npm pack -q "@fontsource/$package" >/dev/null)
      mkdir "$packs/${package%@*}"
      tar -xzf "$packs"/fontsource-"${package%@*}"-*.tgz -C "$packs/${package%@*}"
      "$PYTHON" -c 'import sys; from textrec.processing.data.fonts import merge_web_font_subsets as merge
merge(sys.argv[1], sys.argv[2], tuple(sys.argv[3].split(",")))' "$packs/${package%@*}/package" "$packs/fonts" "${entry#*:}"
    done
    $SUDO mkdir -p "$WEB_FONTS_DIR"
    $SUDO cp "$packs"/fonts/*.ttf "$WEB_FONTS_DIR"/
    rm -rf "$packs"
  else
    echo "setup: no npm; the data engine's Fraktur lines are drawn without ${WEB_FRAKTUR_FONTS[*]}" >&2
  fi
fi
# The training commands build their --help from transformers' TrainingArguments (torch is imported: seconds); the
# first answer is kept, so that later ones come at once (textrec.scripts.cli.answer_help_from_cache).
echo "setup: preparing the training commands' --help..."
for command in train pretrain_charbert train_line_detector; do "$PYTHON" -m "textrec.scripts.$command" --help > /dev/null; done
