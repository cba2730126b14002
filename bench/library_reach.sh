#!/bin/bash
# Issue 48's measure: a cold `jaxlint check` of each library with no configuration, the share of
# its JAX functions linted (the summary's "linted N of M") and its findings (JSON), per worktree.
# Usage: library_reach.sh WORKTREE OUT [NAME...]  (default: all sixteen)
#
# The six (bench/six_libraries.py's releases, unpacked under /tmp/libs, venv /tmp/libvenv) and ten
# more installed into /tmp/lib10venv with
#   pip install "jax[cpu]==0.10.2" flax optimistix lineax dynamax tinygp jaxopt distrax chex gpjax brax
# whose packages are copied out of site-packages into /tmp/libs10/src/NAME/NAME (check skips
# site-packages). Compare two OUT folders with bench/library_reach_report.py (totals, diff, reasons); NAME.coverage.json
# lists each function not linted and why.
set -u
WT=${1:?WORKTREE}; OUT=${2:?OUT}; shift 2
mkdir -p "$OUT"
declare -A DIR=( [optax]=/tmp/libs/optax-0.2.8 [equinox]=/tmp/libs/equinox-0.13.8 [diffrax]=/tmp/libs/diffrax-0.7.2
  [numpyro]=/tmp/libs/numpyro-0.22.0 [blackjax]=/tmp/libs/blackjax-1.7.1 [jax_md]=/tmp/libs/jax_md-0.2.29 )
TEN="flax optimistix lineax dynamax tinygp jaxopt distrax chex gpjax brax"
NAMES=${*:-optax equinox diffrax numpyro blackjax jax_md $TEN}
for name in $NAMES; do
  if [ -n "${DIR[$name]:-}" ]; then cwd=${DIR[$name]}; py=/tmp/libvenv/bin/python
  else cwd=/tmp/libs10/src/$name; py=/tmp/lib10venv/bin/python; fi
  start=$(date +%s.%N)
  (cd "$cwd" && PYTHONPATH=$WT timeout 3600 $py -m jaxlint check --isolated --no-cache --exit-zero \
      --output-format json \
      --coverage-report "$OUT/$name.coverage.json" "$name" > "$OUT/$name.json" 2> "$OUT/$name.log")
  end=$(date +%s.%N)
  echo "$name $(python3 -c "print(round($end-$start,1))") s, $(grep -o 'linted [0-9]* of [0-9]*' "$OUT/$name.log" | head -1)" \
    | tee -a "$OUT/runs.txt"
done
