#!/usr/bin/env bash
# Install the real coding-agent clients the tests drive (tests/agents/) into a cache
# folder, never globally: Codex CLI (@openai/codex) and Claude Code
# (@anthropic-ai/claude-code), both native binaries in their npm packages. With --all also
# opencode and the Continue CLI, the other clients whose requests tests/agents/capture.py
# recorded into tests/fixtures/agent_requests/.
# Versions are pinned: the fixtures were captured from exactly these. An install already
# at these versions is reused without touching the network. Without npm, or when the
# install fails, this says so in one line and exits 0: the tests that need a client skip.
set -uo pipefail
DEST=${EDGEDESK_AGENT_CLIENTS:-$HOME/.cache/edgedesk/agent-clients}
PACKAGES=("@openai/codex@0.171.0" "@anthropic-ai/claude-code@2.1.332")
if [ "${1:-}" = "--all" ]; then
  PACKAGES+=("opencode-ai@1.18.33" "@continuedev/cli@1.5.47")
fi

installed() {  # is every package already there at its pinned version?
  local spec name version
  for spec in "${PACKAGES[@]}"; do
    name=${spec%@*}; version=${spec##*@}
    grep -q "\"version\": \"$version\"" "$DEST/node_modules/$name/package.json" 2>/dev/null \
      || return 1
  done
}

if installed; then
  echo "agent clients: installed in $DEST"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "agent clients: npm not found; the tests that drive Codex CLI and Claude Code skip"
  exit 0
fi
mkdir -p "$DEST"
[ -f "$DEST/package.json" ] || echo '{"name": "edgedesk-agent-clients", "private": true}' \
  > "$DEST/package.json"
# --ignore-scripts=false: Claude Code's postinstall puts its native binary in place.
if npm install --prefix "$DEST" --no-audit --no-fund --loglevel=error --save-exact \
     --ignore-scripts=false "${PACKAGES[@]}" >"$DEST/install.log" 2>&1 && installed; then
  echo "agent clients: installed in $DEST"
else
  echo "agent clients: npm install failed (see $DEST/install.log); their tests skip"
fi
exit 0
