#!/bin/bash
# Issue 25's store measurement, per library (run once the result store is on main):
#   1. a fresh store: .jaxlint_cache/ removed, then `pytest --jaxlint` on the library's slice
#      (bench/six_libraries.py's slices) writes it;
#   2. `jaxlint check PACKAGE` with no other configuration (no --isolated, no --no-cache: the store
#      is read through the result cache; --jobs only chooses how many workers);
#   3. store_compare.py: the plugin's findings against check's, and linted counts;
#   4. a warm `jaxlint check` (nothing changed) against `ruff check --no-cache` on the same
#      package, REPEAT times each, alternating, the fastest of each kept;
#   5. with RERUN=1 (needs `check --rerun-tests`): a one-line edit (EDIT, below) of the module with the
#      most functions the tests linted (from --jaxlint-coverage-report; restored afterwards), then
#      `jaxlint check --rerun-tests` timed, against the tests it ran (the node ids the store
#      recorded for the stale modules) run by hand under the plugin, in the same state;
#      RERUN_REPEAT rounds (default 1), alternating which runs first.
# Usage: store_measure.sh OUT [LIB...]   (LIB: optax equinox diffrax numpyro blackjax jax_md; default all)
# Env: PY (default /tmp/measure/venv/bin/python, with jaxlint installed editable), JOBS (default 1),
#      REPEAT (default 3), LIBS (/tmp/libs), TESTS (/tmp/measure/tests), RERUN_FLAGS (more flags for
#      check --rerun-tests, e.g. "--rerun-timeout 900" where the tests of one module take over 5 minutes).
set -u
OUT=$(realpath -m "${1:?usage: store_measure.sh OUT [LIB...]}"); shift
PY=${PY:-/tmp/measure/venv/bin/python}; JOBS=${JOBS:-1}; REPEAT=${REPEAT:-3}
LIBS=${LIBS:-/tmp/libs}; TESTS=${TESTS:-/tmp/measure/tests}
RUFF=$(dirname "$PY")/ruff
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUT"
NAMES=${*:-optax equinox diffrax numpyro blackjax jax_md}
now() { date +%s.%N; }
secs() { python3 -c "print(round($2 - $1, 2))"; }
for name in $NAMES; do
  # folder, package and slice as bench/six_libraries.py's LIBRARIES table has them
  read -r folder package slice < <("$PY" - "$name" "$LIBS" "$TESTS" "$HERE" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[4])
from six_libraries import LIBRARIES
folder, package, tests = LIBRARIES[sys.argv[1]]
lib = f"{sys.argv[2]}/{folder}"
print(folder, package, ",".join(t.format(lib=lib, tests=sys.argv[3]) for t in tests))
PYEOF
)
  lib="$LIBS/$folder"
  cd "$lib" || exit 1
  rm -rf .jaxlint_cache
  t0=$(now)
  "$PY" -m pytest -p no:cacheprovider -q --color=no --jaxlint --jaxlint-exit-zero \
      --jaxlint-report "$OUT/$name.pytest.json" --jaxlint-coverage-report "$OUT/$name.pytest.coverage.json" \
      ${slice//,/ } > "$OUT/$name.pytest.log" 2>&1
  t1=$(now)
  "$PY" -m jaxlint check --output-format json --exit-zero --jobs "$JOBS" "$package" \
      > "$OUT/$name.check.json" 2> "$OUT/$name.check.log"
  t2=$(now)
  echo "== $name: pytest --jaxlint $(secs $t0 $t1) s, first check after it $(secs $t1 $t2) s" | tee -a "$OUT/results.txt"
  "$PY" "$HERE/store_compare.py" "$lib" "$OUT/$name.pytest.json" "$OUT/$name.check.json" \
      "$OUT/$name.pytest.log" "$OUT/$name.check.log" | tee -a "$OUT/results.txt"
  best_check=999; best_ruff=999
  for _ in $(seq "$REPEAT"); do
    a=$(now); "$PY" -m jaxlint check --output-format json --exit-zero --jobs "$JOBS" "$package" \
        > "$OUT/$name.warm.json" 2> "$OUT/$name.warm.log"; b=$(now)
    "$RUFF" check --no-cache --exit-zero -q "$package" > /dev/null 2>&1; c=$(now)
    best_check=$(python3 -c "print(min($best_check, round($b - $a, 3)))")
    best_ruff=$(python3 -c "print(min($best_ruff, round($c - $b, 3)))")
  done
  cmp -s "$OUT/$name.check.json" "$OUT/$name.warm.json" || echo "  warm check's findings differ from the first check's" | tee -a "$OUT/results.txt"
  echo "  warm check $best_check s, ruff check --no-cache $best_ruff s, ratio $(python3 -c "print(round($best_check / max($best_ruff, 1e-3), 1))")x (goal <= 2x); warm summary: $(grep -E 'linted' "$OUT/$name.warm.log" | head -1)" | tee -a "$OUT/results.txt"
done

# The one-line edit: EDIT=comment (default) appends a comment line to the module; EDIT=body
# makes `_touched_by_store_measure = N` the first statement of the module's first function the
# tests linted (a change of code: every module whose import ran that function is stale too).
touch_module() {
  if [ "${EDIT:-comment}" = body ]; then
    "$PY" - "$module" "$OUT/$name.pytest.coverage.json" "$1" <<'PYEOF' || exit 1
import ast, json, sys
path, coverage, round_ = sys.argv[1], sys.argv[2], sys.argv[3]
lines = sorted(f["first_line"] for f in json.load(open(coverage))["functions"] if f["path"] == path and f.get("linted"))
source = open(path).read()
for node in ast.walk(ast.parse(source)):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and lines and \
            min(d.lineno for d in [node, *node.decorator_list]) == lines[0]:
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(node.body) > 1:
            first = node.body[1]  # after the docstring
        text = source.splitlines(keepends=True)
        indent = text[first.lineno - 1][:first.col_offset]
        text.insert(first.lineno - 1, f"{indent}_touched_by_store_measure = {round_}\n")
        open(path, "w").write("".join(text))
        break
else:
    sys.exit(f"no linted function at line {lines[:1]} of {path}")
PYEOF
  else
    echo "# touched by store_measure.sh, round $1" >> "$module"
  fi
}

if [ "${RERUN:-0}" = 1 ]; then
  for name in $NAMES; do
    read -r folder package < <("$PY" - "$name" "$HERE" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[2])
from six_libraries import LIBRARIES
print(*LIBRARIES[sys.argv[1]][:2])
PYEOF
)
    lib="$LIBS/$folder"; cd "$lib" || exit 1
    module=$("$PY" -c "
import json, collections, sys
d = json.load(open(sys.argv[1]))
c = collections.Counter(f['path'] for f in d.get('functions', []) if f.get('linted'))
print(c.most_common(1)[0][0] if c else '')" "$OUT/$name.pytest.coverage.json")
    [ -n "$module" ] || { echo "== $name: no linted module to touch" | tee -a "$OUT/results.txt"; continue; }
    cp -p "$module" "$OUT/$name.touched.bak"
    trap 'cp -p "$OUT/$name.touched.bak" "$module"' EXIT INT TERM
    # The node ids check --rerun-tests will run (those the store records for the stale modules),
    # read after each edit, before check runs: by hand runs exactly those.
    stale_ids() {
      "$PY" - "$package" > "$OUT/$name.rerun.ids" <<'PYEOF'
import sys
from jaxlint.config import load_config
from jaxlint.engine.cache import ResultCache
from jaxlint.engine.rerun import stale_in_store
config = load_config([sys.argv[1]])
cache = ResultCache(config.cache_dir, config.root)
stale = stale_in_store([sys.argv[1]], config, [rule.code for rule in config.rules()], cache)
print("\n".join(dict.fromkeys(test for _, tests in stale for test in tests)))
PYEOF
      mapfile -t ids < "$OUT/$name.rerun.ids"  # one node id per line (parametrized ids hold spaces)
    }
    touch_module 0
    stale_ids
    # RERUN_REPEAT rounds; even rounds run the tests by hand first, so neither side always has
    # the warmer file cache. The tests by hand write the store too, so each check --rerun-tests
    # follows an edit of its own (a new comment line).
    for round in $(seq "${RERUN_REPEAT:-1}"); do
      rerun_check() {
        touch_module "$round"
        stale_ids
        a=$(now); "$PY" -m jaxlint check --rerun-tests ${RERUN_FLAGS:-} --output-format json --exit-zero --jobs "$JOBS" "$package" \
            > "$OUT/$name.rerun.json" 2> "$OUT/$name.rerun.log"; b=$(now)
        check_s=$(secs $a $b)
      }
      by_hand() {
        a=$(now); "$PY" -m pytest -p no:cacheprovider -q --jaxlint --jaxlint-exit-zero "${ids[@]}" \
            > "$OUT/$name.byhand.log" 2>&1; b=$(now)
        hand_s=$(secs $a $b)
      }
      if [ $((round % 2)) = 1 ]; then rerun_check; by_hand; else by_hand; rerun_check; fi
      grep -q "ran them in" "$OUT/$name.rerun.log" || echo "  round $round: check did not run the tests: $(grep jaxlint: "$OUT/$name.rerun.log" | tail -1)" | tee -a "$OUT/results.txt"
      echo "== $name round $round: touched $module; check --rerun-tests $check_s s (status in $OUT/$name.rerun.log); its ${#ids[@]} tests by hand under the plugin $hand_s s: ratio $(python3 -c "print(round($check_s / max($hand_s, 1e-3), 2))")x (goal <= 1.5x); load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/results.txt"
    done
    cp -p "$OUT/$name.touched.bak" "$module"; trap - EXIT INT TERM
  done
fi
