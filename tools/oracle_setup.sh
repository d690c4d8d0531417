#!/usr/bin/env bash
# Build what the `oracle` test tier runs: each target framework's own config code, CPU only.
#
#   bash tools/oracle_setup.sh [DIR]          # default DIR=/tmp/neoconv-oracle
#   . DIR/oracle.env                          # exports NEOCONV_ORACLE_* and the source paths
#   python -m pytest -m oracle                # or: python tools/oracle_matrix.py
#
# About 15 minutes and 8 GB on first run; a step whose result exists is skipped, so re-running
# finishes what an interrupted run left. What it builds (versions are the ones the tier was
# measured with; see README "Oracle tier"):
#   DIR/src/neox         GPT-NeoX source at $NEOX_REV              (git archive of a clone/mirror)
#   DIR/src/veomni       VeOmni source at $VEOMNI_REV (nested layout)
#   DIR/src/veomni-flat  VeOmni source at $VEOMNI_FLAT_REV (flat layout, before PR #538)
#   DIR/src/modelzoo     Cerebras Model Zoo at Release_2.10.0
#   DIR/src/megatron     Megatron-LM at $MEGATRON_REV (core_v0.19.0)
#   DIR/torch            torch CPU + deepspeed 0.19.8 + what NeoX's argument code imports:
#                        DeepSpeedConfig and NeoXArgs.from_ymls both run here
#   DIR/ds017            torch CPU + deepspeed 0.17.6: tells a DeepSpeed source of an older
#                        release (release drift) from one no DeepSpeed accepts
#   DIR/hf               torch CPU + transformers 5.23 (AutoConfig, meta-device builds)
#   DIR/hftrainer-V      torch CPU + transformers V (5.23.0, 4.57.1) + accelerate + deepspeed 0.19.8: the
#                        Trainer's TrainingArguments, HfTrainerDeepSpeedConfig and get_scheduler
#   DIR/veomni           torch CPU + transformers 5.9.0 (the version VeOmni's pyproject names)
#   DIR/cerebras         torch 2.14.1 + torchvision 0.29.1, cerebras-pytorch/appliance 2.10.0
#                        (--no-deps: they pin torch 2.4.0) and the pure-Python packages Model Zoo
#                        2.10 imports
#   DIR/megatron         Python 3.12 (Megatron-LM core_v0.17+ needs it: $PYTHON312) + torch CPU, numpy,
#                        packaging, triton, einops, pyyaml: Megatron-LM's arguments code and GPTModel
#                        (neoconv prove's megatron probe)
# Sources come from git repositories: $NEOX_GIT, $VEOMNI_GIT, $MODELZOO_GIT (a clone or bare
# mirror; default ../.mirror/<owner>+<name>/repo beside the checkout). Wheels come from pip's
# configured index.
set -euo pipefail

DIR=${1:-/tmp/neoconv-oracle}
HERE=$(cd "$(dirname "$0")/.." && pwd)
MIRRORS=$(cd "$HERE/.." && pwd)/.mirror
NEOX_GIT=${NEOX_GIT:-$MIRRORS/EleutherAI+gpt-neox/repo}
VEOMNI_GIT=${VEOMNI_GIT:-$MIRRORS/ByteDance-Seed+VeOmni/repo}
MODELZOO_GIT=${MODELZOO_GIT:-$MIRRORS/Cerebras+modelzoo/repo}
MEGATRON_GIT=${MEGATRON_GIT:-$MIRRORS/NVIDIA+Megatron-LM/repo}
NEOX_REV=${NEOX_REV:-ea7aefd8}
VEOMNI_REV=${VEOMNI_REV:-d9774494f5d8042321386c65c9406e732a271501}
VEOMNI_FLAT_REV=${VEOMNI_FLAT_REV:-ac3b9f01c3cabeea5e32764cf704cd4570ffa438}
MODELZOO_REV=${MODELZOO_REV:-Release_2.10.0}
MEGATRON_REV=${MEGATRON_REV:-core_v0.19.0}
PYTHON312=${PYTHON312:-python3.12}
TORCH=${TORCH:-torch==2.13.0}

mkdir -p "$DIR/src"
log() { printf '[oracle-setup] %s\n' "$*" >&2; }

export_tree() {  # export_tree GIT REV DEST: the tree at REV, without a work tree or history
  local git=$1 rev=$2 dest=$3
  [ -e "$dest/.exported" ] && return 0
  log "exporting $git@$rev -> $dest"
  rm -rf "$dest" && mkdir -p "$dest"
  # a mirror may lack a blob (Model Zoo's owt/metadata/train_512k.txt): export every path it has
  local missing
  missing=$(git --git-dir="$git" ls-tree -r "$rev" | awk '$2 == "blob" {print $3}' \
    | git --git-dir="$git" cat-file --batch-check | awk '$2 == "missing" {print $1}')
  if [ -z "$missing" ]; then
    git --git-dir="$git" archive "$rev" | tar -x -C "$dest"
  else
    log "  (blobs absent from the repository, skipped: $(echo "$missing" | wc -l))"
    git --git-dir="$git" ls-tree -r "$rev" | grep -v -F "$missing" | cut -f2- > "$dest.paths"
    # several archives if xargs splits the list: tar -i reads past each end-of-archive
    xargs -d '\n' git --git-dir="$git" archive "$rev" -- < "$dest.paths" | tar -x -i -C "$dest"
  fi
  rm -f "$dest.paths"
  touch "$dest/.exported"
}

venv() {  # venv NAME PACKAGES...: a venv with those packages (skipped when it was completed before)
  local name=$1; shift
  [ -e "$DIR/$name/.complete" ] && return 0
  log "venv $DIR/$name: $*"
  rm -rf "${DIR:?}/$name"
  python3 -m venv "$DIR/$name"
  "$DIR/$name/bin/pip" install -q --disable-pip-version-check "$@"
}

done_venv() { touch "$DIR/$1/.complete"; }

gitdir() { if [ -d "$1/.git" ]; then echo "$1/.git"; else echo "$1"; fi; }

export_tree "$(gitdir "$NEOX_GIT")" "$NEOX_REV" "$DIR/src/neox"
export_tree "$(gitdir "$VEOMNI_GIT")" "$VEOMNI_REV" "$DIR/src/veomni"
export_tree "$(gitdir "$VEOMNI_GIT")" "$VEOMNI_FLAT_REV" "$DIR/src/veomni-flat"
export_tree "$(gitdir "$MODELZOO_GIT")" "$MODELZOO_REV" "$DIR/src/modelzoo"
if [ -e "$(gitdir "$MEGATRON_GIT")" ]; then export_tree "$(gitdir "$MEGATRON_GIT")" "$MEGATRON_REV" "$DIR/src/megatron"; fi

# DeepSpeed (no compiled ops) + GPT-NeoX's argument code. NeoX imports its whole megatron package
# (tokenizers, mpu, logging), hence requests/tokenizers/transformers/sentencepiece/tiktoken;
# arguments.py imports pkg_resources (setuptools < 81).
if [ ! -e "$DIR/torch/.complete" ]; then
  venv torch "$TORCH" pyyaml 'setuptools<81'
  DS_BUILD_OPS=0 "$DIR/torch/bin/pip" install -q --disable-pip-version-check deepspeed==0.19.8
  "$DIR/torch/bin/pip" install -q --disable-pip-version-check requests 'numpy<2' regex six ftfy sentencepiece \
    tiktoken tokenizers 'transformers<5'
  done_venv torch
fi

if [ ! -e "$DIR/ds017/.complete" ]; then
  venv ds017 "$TORCH"
  DS_BUILD_OPS=0 "$DIR/ds017/bin/pip" install -q --disable-pip-version-check deepspeed==0.17.6
  done_venv ds017
fi

# transformers 5.23 with torch CPU: AutoConfig, and the meta-device builds that count parameters (hf-torch)
if [ ! -e "$DIR/hf/.complete" ]; then venv hf "$TORCH" transformers==5.23.0 && done_venv hf; fi

# The HF Trainer (TrainingArguments, HfTrainerDeepSpeedConfig, get_scheduler) at a 5.x and a 4.x release
for v in 5.23.0 4.57.1; do
  if [ ! -e "$DIR/hftrainer-$v/.complete" ]; then
    venv "hftrainer-$v" "$TORCH" "transformers==$v" accelerate pyyaml
    DS_BUILD_OPS=0 "$DIR/hftrainer-$v/bin/pip" install -q --disable-pip-version-check deepspeed==0.19.8
    done_venv "hftrainer-$v"
  fi
done

# VeOmni: its package is imported from the source export. triton only because VeOmni's default
# load_balancing_loss_implementation ("triton") is checked against the installed packages.
if [ ! -e "$DIR/veomni/.complete" ]; then
  venv veomni "$TORCH" transformers==5.9.0 pyyaml psutil packaging triton && done_venv veomni
fi

# Cerebras: torchvision 0.28 with torch 2.13 fails to load (torchvision::nms), so this venv takes
# torch 2.14.1 + torchvision 0.29.1 from the index. cerebras-pytorch's compiled extension is built
# for torch 2.4 and cannot load here (tests/oracle_checks/cerebras.py says why that cannot change a
# verdict); its Python code (optimizers, schedulers, callbacks) is what the validator introspects.
if [ ! -e "$DIR/cerebras/.complete" ]; then
  venv cerebras torch==2.14.1 torchvision==0.29.1 pyyaml
  C="$DIR/cerebras/bin/pip"
  wheels=$(mktemp -d)
  "$C" download -q --disable-pip-version-check --no-deps -d "$wheels" cerebras-pytorch==2.10.0 cerebras-appliance==2.10.0
  "$C" install -q --disable-pip-version-check --no-deps "$wheels"/*.whl
  rm -rf "$wheels"
  # the pins of cerebras-pytorch/appliance 2.10 (pure Python) and what Model Zoo 2.10's imports need
  "$C" install -q --disable-pip-version-check torch==2.14.1 torchvision==0.29.1 \
    psutil==7.1.3 numpy==1.25.0 protobuf==4.21.12 grpcio==1.51.1 dill==0.3.8 pandas==2.2.3 tabulate==0.9.0 \
    tblib==3.0.0 multiprocess==0.70.16 h5py==3.13.0 'packaging<26' urllib3==2.6.3 'PyJWT<3' 'zstandard<1' \
    hdf5plugin tqdm pydantic==2.8.2 transformers==4.57.1 tokenizers==0.22.1 Pillow==10.4.0 safetensors \
    sentencepiece==0.2.1 regex more-itertools==10.5.0 jsonschema==4.23.0 click==8.3.0 termcolor==3.2.0 \
    ftfy==6.2.3 scipy==1.15.3 requests six rich jsonlines Keras-Preprocessing==1.1.2 slack-sdk==3.33.1 \
    argcomplete==3.6.3 datasets==3.6.0 'huggingface-hub>=0.34.0,<1.0' pyarrow==17.0.0 \
    lm-eval==0.4.9.1
  # (bigcode_eval, which Model Zoo pins as a GitHub archive, is not on a package index:
  #  tests/oracle_checks/check_cerebras.py stands in for it)
  done_venv cerebras
fi

# Megatron-LM (neoconv prove's probe): its own Python, since core_v0.17.0 needs 3.12
if [ -e "$DIR/src/megatron/.exported" ] && [ ! -e "$DIR/megatron/.complete" ] && command -v "$PYTHON312" >/dev/null; then
  log "venv $DIR/megatron: $PYTHON312 $TORCH numpy packaging triton einops pyyaml"
  rm -rf "${DIR:?}/megatron"
  "$PYTHON312" -m venv "$DIR/megatron"
  "$DIR/megatron/bin/pip" install -q --disable-pip-version-check "$TORCH" numpy packaging triton einops pyyaml
  done_venv megatron
fi

cat > "$DIR/oracle.env" <<EOF
# generated by tools/oracle_setup.sh: . this file, then python -m pytest -m oracle
export NEOCONV_ORACLE_NEOX=$DIR/torch/bin/python
export NEOCONV_ORACLE_DEEPSPEED=$DIR/torch/bin/python
export NEOCONV_ORACLE_DEEPSPEED_OLD=$DIR/ds017/bin/python
export NEOCONV_ORACLE_HF=$DIR/hf/bin/python
export NEOCONV_ORACLE_HFTRAINER=$DIR/hftrainer-5.23.0/bin/python
export NEOCONV_ORACLE_HFTRAINER_4=$DIR/hftrainer-4.57.1/bin/python
export NEOCONV_ORACLE_VEOMNI=$DIR/veomni/bin/python
export NEOCONV_ORACLE_CEREBRAS=$DIR/cerebras/bin/python
export NEOX_SRC=$DIR/src/neox
export VEOMNI_SRC=$DIR/src/veomni
export VEOMNI_FLAT_SRC=$DIR/src/veomni-flat
export MODELZOO_SRC=$DIR/src/modelzoo/src
export NEOCONV_ORACLE_MEGATRON=$DIR/megatron/bin/python
export MEGATRON_SRC=$DIR/src/megatron
EOF
log "done: . $DIR/oracle.env"
