#!/bin/bash
# Default and --infer-arguments `jaxlint check` runs on the eight libraries and /work/main/examples.
# Usage: infer_measure.sh OUT [NAME...]   (names: optax equinox ... examples; default all)
set -u
OUT=${1:?OUT}; shift
PY=/tmp/measure/venv/bin/python
mkdir -p "$OUT"
declare -A DIR=( [optax]=/tmp/libs/optax-0.2.8:optax [equinox]=/tmp/libs/equinox-0.13.8:equinox
  [diffrax]=/tmp/libs/diffrax-0.7.2:diffrax [numpyro]=/tmp/libs/numpyro-0.22.0:numpyro
  [blackjax]=/tmp/libs/blackjax-1.7.1:blackjax [jax_md]=/tmp/libs/jax_md-0.2.29:jax_md
  [optimistix]=/tmp/libs/optimistix-0.1.0:optimistix [jaxopt]=/tmp/libs/jaxopt-0.8.5:jaxopt
  [examples]=/work/main:examples )
NAMES=${*:-optax equinox diffrax numpyro blackjax jax_md optimistix jaxopt examples}
for name in $NAMES; do
  cwd=${DIR[$name]%%:*}; pkg=${DIR[$name]##*:}
  for mode in default infer; do
    extra=(); [ $mode = infer ] && extra=(--infer-arguments)
    start=$(date +%s.%N)
    (cd "$cwd" && $PY -m jaxlint check --isolated --no-cache --output-format json --exit-zero --jobs 1 \
        "${extra[@]}" --coverage-report "$OUT/$name.$mode.coverage.json" "$pkg" \
        > "$OUT/$name.$mode.json" 2> "$OUT/$name.$mode.log")
    status=$?
    end=$(date +%s.%N)
    secs=$(python3 -c "print(round($end-$start,1))")
    codes=$(python3 -c "
import json,collections,sys
t=open('$OUT/$name.$mode.json').read()
f=json.loads(t) if t.strip() else []
print(dict(collections.Counter(x['code'] for x in f)))")
    echo "$name $mode status=$status seconds=$secs findings=$codes | $(grep -E '^jaxlint: | files checked' "$OUT/$name.$mode.log" | tr '\n' ' ')" | tee -a "$OUT/runs.txt"
  done
done
