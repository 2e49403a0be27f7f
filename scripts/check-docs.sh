#!/usr/bin/env bash
# Keeps the repository self-explanatory (run by scripts/test.sh before the
# cargo steps). Fails, printing every offending line, when:
#  1. README.md, CHANGELOG.md, docs/ or crates/ speak of development
#     sessions ("session 12", "this session", "last session", "previous
#     session"): state facts as they are now, history goes in CHANGELOG.md
#     as dated entries;
#  2. code, tests, scripts or docs cite files that are not in the repository
#     (`../shared`, `WORKLOADS.md`, `SEEDS 001`, `DESIGN.md`, `DESIGN rule 6`)
#     instead of docs/ (docs/workloads.md, docs/experiments.md,
#     docs/architecture.md's numbered design rules);
#  3. README.md passes 500 lines: it is a user's document;
#  4. a source file under crates/*/src passes 700 lines without saying at
#     its top why it is one file (a `//!` line starting "One file because").
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
fail() {
  echo "check-docs: $1" >&2
  status=1
}

# 1. Session wording. docs/results/ holds generated reports and is checked
# too; grep -I skips binary files.
session_re='session[[:space:]-]*[0-9]+|(this|last|previous)[[:space:]]+session'
hits=$(grep -rnIiE "$session_re" README.md CHANGELOG.md docs crates 2>/dev/null || true)
if [ -n "$hits" ]; then
  fail "development-session wording (state facts as they are now; history goes in CHANGELOG.md):"
  echo "$hits" >&2
fi

# 2. Citations of files outside the repository. A line passes only if it
# names a docs/ path and nothing under ../shared. docs/results/ is the
# bench's generated output and is not checked here.
cite_re='\.\./shared|WORKLOADS\.md|SEEDS[[:space:]_-]?[0-9]{3}|DESIGN\.md|DESIGN[[:space:]]+rules?'
cite_paths=(README.md CHANGELOG.md scripts crates)
for f in docs/*.md; do cite_paths+=("$f"); done

hits=$(grep -rnIE "$cite_re" "${cite_paths[@]}" 2>/dev/null |
  grep -v '^scripts/check-docs\.sh:' || true)
bad=""
while IFS= read -r hit; do
  [ -n "$hit" ] || continue
  file=${hit%%:*}
  rest=${hit#*:}
  text=${rest#*:}
  if [[ "$text" == *docs/* && "$text" != *../shared* ]]; then
    continue
  fi
  bad+="$hit"$'\n'
done <<<"$hits"
if [ -n "$bad" ]; then
  fail "citations of files outside the repository (point into docs/ instead):"
  printf '%s' "$bad" >&2
fi

# 3. The README's length.
lines=$(wc -l <README.md)
if [ "$lines" -gt 500 ]; then
  fail "README.md has $lines lines (at most 500): move detail into docs/"
fi

# 4. Files a reader cannot take in one sitting.
while IFS= read -r f; do
  n=$(wc -l <"$f")
  if [ "$n" -gt 700 ] && ! head -n 40 "$f" | grep -q 'One file because'; then
    fail "$f has $n lines: split it by concept, or say at its top why not (//! One file because …)"
  fi
done < <(find crates/*/src -name '*.rs')

if [ "$status" -eq 0 ]; then
  echo "check-docs: ok (README.md $lines lines)"
fi
exit "$status"
