# Shared by the step scripts of .ci/run (sourced, not run): strict mode, the scratch folder's layout (every
# path a later step needs is derived from GEMMKIT_CI_WORK, so a step can be re-run on its own), and helpers.
# shellcheck disable=SC2034  # the paths below are used by the step scripts that source this file
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${PYTHON:-python3}
work=${GEMMKIT_CI_WORK:?"run the steps through .ci/run (or set GEMMKIT_CI_WORK to a scratch folder)"}
tools="$work/tools/bin"     # 02: build, cibuildwheel, validate-pyproject, check-jsonschema, pytest
dist="$work/dist"           # 04, 05: the sdist and the wheel built from it
venv="$work/venv"           # 06: the wheel with its test extra
rundir="$work/run"          # where the installed package is imported and tested from (outside the checkout)
clone="$work/readme-clone"  # 08: a fresh clone of HEAD (its docs/ and README.md are the ones .ci/docs checks)
step_file=$(basename "$0")

trap 'printf "\nCI FAILED: command exited %d at .ci/steps/%s line %d: %s\n" "$?" "$step_file" "$LINENO" "$BASH_COMMAND" >&2' ERR

say() {  # a heading inside a step
  printf '\n=== %s\n' "$*"
}
run() {
  printf '+ %s\n' "$*"
  "$@"
}
die() {
  printf '\nCI FAILED: %s\n' "$*" >&2
  exit 1
}
# pytest exits 5 when it ran no test: that is a failure here, as any other non-zero exit.
pytest_ok() {
  local rc=0
  "$@" || rc=$?
  if [ $rc -eq 5 ]; then die "pytest collected no test: $*"; fi
  if [ $rc -ne 0 ]; then die "pytest exited $rc: $*"; fi
}
# The one file built after a step, by glob (the sdist, the wheel).
only_file() {  # only_file WHAT PATTERN
  local what=$1 files
  shopt -s nullglob
  # shellcheck disable=SC2206
  files=($2)
  shopt -u nullglob
  [ ${#files[@]} -eq 1 ] || die "expected one $what ($2), found ${#files[@]}"
  printf '%s\n' "${files[0]}"
}
