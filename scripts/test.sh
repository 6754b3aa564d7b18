#!/usr/bin/env bash
# The test command: on a fresh machine it sets up everything the suite needs, then runs it all.
#   - Debian's Chromium for the browser tests, when /usr/bin/chromium is missing (apt-get, with sudo unless root);
#   - a virtual environment .venv with td2048 installed editable and every extra the tests use
#     (pip runs again only when pyproject.toml changed since the last install);
#   - then pytest, with any arguments given here: scripts/test.sh -k watch
# .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "scripts/test.sh: $*" >&2; }

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { say "td2048 needs Python 3.11 or newer (python3 is $(python3 -V 2>&1))"; exit 2; }

if [ ! -x /usr/bin/chromium ]; then
    if ! command -v apt-get >/dev/null; then
        say "the browser tests need Chromium at /usr/bin/chromium (Debian's package chromium): install it and run again"
        exit 2
    fi
    as_root=()
    [ "$(id -u)" = 0 ] || as_root=(sudo)
    say "installing Debian's Chromium for the browser tests (${as_root[*]:-as root}) ..."
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# torch==2.13.0: the release the RL libraries' tests use (stable-baselines3 pulls torch)
stamp=.venv/.td2048-test-install
wanted="$(sha256sum pyproject.toml | cut -d' ' -f1) torch==2.13.0"
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
    say "installing td2048 and its test dependencies into .venv ..."
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/pip install -q -e '.[test,ray,docs,rl]' torch==2.13.0
    echo "$wanted" > "$stamp"
fi

# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): the processes that
# the tests start then load td2048 and pytest's rewritten test modules compiled, not from source each time.
unset PYTHONDONTWRITEBYTECODE
exec .venv/bin/python -m pytest -q "$@"
