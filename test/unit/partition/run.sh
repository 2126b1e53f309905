#!/bin/bash
# A model on two devices (PartitionedMlp.cpp) against the same model on one:
# trains, resumes, evaluates, initialises and predicts to the same bits under
# `mpirun -np 2`; refuses to run without mpirun or with another -np; and when
# one rank fails, in a step or loading its part of a checkpoint, every rank
# exits non-zero and no --save file appears.
#   run.sh EXE PYTHON WORK DATA   (exit 77: no Fashion-MNIST or no mpirun)
set -u
exe=$1 python=$2 work=$3 data=$4
compare="$python $(dirname "$0")/compare_checkpoints.py"
if [ ! -e "$data/train-images-idx3-ubyte.gz" ] && [ ! -e "$data/train-images-idx3-ubyte" ]; then
  echo "skipped: no Fashion-MNIST in $data (Debian package dataset-fashion-mnist)"
  exit 77
fi
if ! command -v mpirun > /dev/null; then
  echo "skipped: no mpirun (Debian package openmpi-bin)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/ompi-session" && cd "$work" || exit 1
# Open MPI 4's session directory of its own: the shared /tmp/ompi.HOST.UID is removed by the
# last job to end, under another test's starting job (open-mpi/ompi#8510).
export OMPI_MCA_orte_tmpdir_base="$work/ompi-session"
# Two ranks on two cores: one thread each, and no spinning for the other.
export OMP_WAIT_POLICY=passive
mpi() { mpirun --oversubscribe --bind-to none "$@"; }
base=(--seed 7 --threads 1 --data "$data")
common=(--steps 20 "${base[@]}")
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect CODE LOG: the last command's exit code was CODE (or any non-zero: "nonzero").
expect() {
  local code=$1 want=$2 log=$3
  if [ "$want" = nonzero ] && [ "$code" -ne 0 ]; then return 0; fi
  if [ "$want" = "$code" ]; then return 0; fi
  fail "exit code $code, expected $want; its output:"; sed 's/^/  | /' "$log"
  return 1
}
contains() { # contains LOG TEXT
  grep -qF -- "$2" "$1" || { fail "'$2' not in the output:"; sed 's/^/  | /' "$1"; }
}

echo "== without mpirun, and with -np 3: refused"
"$exe" two train "${common[@]}" > plain.log 2>&1; expect $? 1 plain.log
contains plain.log 'error: this executable runs model PartitionedMlp on 2 devices, one process'
contains plain.log 'launch it as `mpirun -np 2 cairn-partitioned-mlp ...`'
mpi -np 3 "$exe" two train "${common[@]}" > np3.log 2>&1; expect $? nonzero np3.log
contains np3.log "on 2 devices, one process each (not 3)"
"$exe" two --help > help.log 2>&1; expect $? 0 help.log
contains help.log "mpirun -np 2"
"$exe" two --version > version.log 2>&1; expect $? 0 version.log
contains version.log "on 2 devices"

echo "== train 20 steps on two devices and on one"
mpi -np 2 "$exe" two train "${common[@]}" --save two.safetensors --metrics two.json \
  > two.log 2>&1; expect $? 0 two.log && cat two.log
"$exe" one train "${common[@]}" --save one.safetensors --metrics one.json > one.log 2>&1
expect $? 0 one.log
$compare two.safetensors one.safetensors || fail "the checkpoints differ"
$compare --metrics two.json one.json final_loss test_loss test_accuracy steps \
  || fail "the metrics differ"

echo "== -np 1: the one spec through MPI"
mpi -np 1 "$exe" one-mpi train "${common[@]}" --save one-mpi.safetensors > one-mpi.log 2>&1
expect $? 0 one-mpi.log
$compare one-mpi.safetensors one.safetensors || fail "the -np 1 checkpoint differs"

echo "== resume both for 5 steps"
mpi -np 2 "$exe" two train "${base[@]}" --steps 5 --load two.safetensors \
  --save two-resumed.safetensors > two-resumed.log 2>&1; expect $? 0 two-resumed.log
"$exe" one train "${base[@]}" --steps 5 --load one.safetensors \
  --save one-resumed.safetensors > one-resumed.log 2>&1; expect $? 0 one-resumed.log
$compare two-resumed.safetensors one-resumed.safetensors || fail "the resumed checkpoints differ"

echo "== eval, init, predict"
mpi -np 2 "$exe" two eval --load two.safetensors --data "$data" --threads 1 \
  --metrics two-eval.json > two-eval.log 2>&1; expect $? 0 two-eval.log
"$exe" one eval --load one.safetensors --data "$data" --threads 1 --metrics one-eval.json \
  > one-eval.log 2>&1; expect $? 0 one-eval.log
$compare --metrics two-eval.json one-eval.json test_loss test_accuracy || fail "eval differs"
mpi -np 2 "$exe" two init --seed 3 --save two-init.safetensors > two-init.log 2>&1
expect $? 0 two-init.log
"$exe" one init --seed 3 --save one-init.safetensors > one-init.log 2>&1
expect $? 0 one-init.log
$compare two-init.safetensors one-init.safetensors || fail "the initial weights differ"
$python -c "
import numpy as np
np.save('x.npy', np.random.default_rng(1).integers(0, 256, (70, 1, 28, 28), dtype=np.uint8))"
mpi -np 2 "$exe" two predict --load two.safetensors --input x.npy --out two.npy \
  > two-predict.log 2>&1; expect $? 0 two-predict.log
"$exe" one predict --load one.safetensors --input x.npy --out one.npy > one-predict.log 2>&1
expect $? 0 one-predict.log
$compare --npy two.npy one.npy || fail "the predictions differ"
mpi -np 2 "$exe" two step --load two.safetensors --batch x --out step.safetensors \
  > step.log 2>&1; expect $? 1 step.log
contains step.log "step cannot yet gather every device's gradients"

echo "== device 1 fails in its 5th step"
CAIRN_TEST_FAIL_STEP=5 mpi -np 2 -x CAIRN_TEST_FAIL_STEP "$exe" two train "${common[@]}" \
  --save failed.safetensors > failed.log 2>&1; expect $? nonzero failed.log
contains failed.log "error: device 1: training step 5 (epoch 1): cross_entropy: label 12"
[ ! -e failed.safetensors ] || fail "a failed run wrote failed.safetensors"
ls failed.safetensors.* > /dev/null 2>&1 && fail "a failed run left a temporary file"

echo "== device 1's weight missing from the checkpoint"
$compare --drop fc1.weight two.safetensors lacking.safetensors || fail "cannot write lacking"
mpi -np 2 "$exe" two train "${common[@]}" --load lacking.safetensors \
  --save lacking-out.safetensors > lacking.log 2>&1; expect $? nonzero lacking.log
contains lacking.log "error: device 1: lacking.safetensors: "
contains lacking.log "fc1.weight"
[ ! -e lacking-out.safetensors ] || fail "a failed run wrote lacking-out.safetensors"

if [ "$failures" -ne 0 ]; then
  echo "$failures checks failed"
  exit 1
fi
echo "all checks passed"
