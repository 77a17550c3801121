#!/usr/bin/env bash
# Commit subjects are at most 72 characters, merge commits included (write their
# subjects by hand). History before .ci/commit-check-base is as it landed and is not
# re-judged; every commit after it is. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(tr -d '[:space:]' < .ci/commit-check-base)
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null 2>&1; then
  echo "commit check: skipped (no git history with $base here)"
  exit 0
fi
# Characters, not bytes: a subject may hold an arrow or Chinese.
long=$(git log --format='%h %s' "$base"..HEAD | "${PYTHON:-python3}" -c '
import sys
for line in sys.stdin.buffer.read().decode("utf-8", "replace").splitlines():
    if len(line.split(" ", 1)[-1]) > 72:
        print(line)')
if [ -n "$long" ]; then
  echo "commit subjects over 72 characters (say the rest in the body):"
  echo "$long"
  exit 1
fi
echo "commit check: $(git rev-list --count "$base"..HEAD) commits since $base, subjects all ≤ 72 characters"
