# Shared by scripts/test, scripts/test-one, scripts/lint, scripts/check and .ci/run: make
# (or refresh) the project environments, and run ruff.
#   .venv311: Python 3.11, jax 0.10.x (the oldest supported): the whole suite
#   .venv312: Python 3.12, jax 0.12.x (the newest supported): the whole suite
#   .venv313: Python 3.13, jax 0.12.x: a smoke subset (SMOKE_TESTS in scripts/test);
#             only what the subset needs (the mypy extra, pytest), no other checkers
#   .venv312-mypy-oldest: a small venv layered over .venv312 (its packages through a
#             .pth) with the oldest mypy of the declared range installed in front:
#             the plugin and CLI slice (MYPY_OLDEST_TESTS in scripts/test)
# A venv is rebuilt when pyproject.toml changes (stamp file inside it).

#: the oldest mypy of pyproject's declared range (mypy>=2.4,<2.5); the newest is the
#: test extra's pin. tests/packaging/test_docs.py checks both against pyproject.
MYPY_OLDEST="2.4.0"

find_python() {  # find_python 3.12 -> path of an interpreter of that version
    local want="$1" cand
    for cand in "python$want" "$(command -v pyenv >/dev/null 2>&1 && pyenv root)/versions/$want"*/bin/python; do
        if command -v "$cand" >/dev/null 2>&1 || [ -x "$cand" ]; then
            if "$cand" -c "import sys; sys.exit(0 if '%d.%d' % sys.version_info[:2] == '$want' else 1)" 2>/dev/null; then
                echo "$cand"; return 0
            fi
        fi
    done
    echo "error: Python $want not found (install it, e.g. 'pyenv install $want')" >&2
    return 1
}

_pip() {  # _pip VENV ARGS...: a quiet pip install
    local dir="$1"; shift
    "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@" 2>&1 | grep -v '^WARNING: Location' || true
}

ensure_venv() {  # ensure_venv DIR PYVERSION "JAX REQUIREMENTS" ["PROJECT REQUIREMENTS", default: -e .[test]]
    local dir="$1" pyver="$2" jaxreq="$3" projreq="${4:--e .[test]}" stamp
    stamp="$(cat pyproject.toml | sha256sum | cut -c1-16) $jaxreq $projreq"
    if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.typed-pallas-stamp" 2>/dev/null)" = "$stamp" ]; then
        return 0
    fi
    echo "--- preparing $dir (Python $pyver, $jaxreq)"
    local py; py="$(find_python "$pyver")"
    [ -x "$dir/bin/python" ] || "$py" -m venv "$dir"
    _pip "$dir" --upgrade pip
    set -f  # no globbing of ".[test]"
    # shellcheck disable=SC2086
    _pip "$dir" $jaxreq $projreq
    set +f
    "$dir/bin/python" -c "import jax, typed_pallas, mypy" || { echo "error: $dir is not usable" >&2; return 1; }
    echo "$stamp" > "$dir/.typed-pallas-stamp"
}

ensure_layered_venv() {  # ensure_layered_venv DIR BASE "REQUIREMENTS": BASE's packages, REQUIREMENTS in front
    local dir="$1" base="$2" reqs="$3" stamp
    stamp="$(cat "$base/.typed-pallas-stamp") | $reqs"
    if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.typed-pallas-stamp" 2>/dev/null)" = "$stamp" ]; then
        return 0
    fi
    echo "--- preparing $dir ($reqs over $base)"
    rm -rf "$dir"
    "$base/bin/python" -m venv "$dir"
    # shellcheck disable=SC2086
    _pip "$dir" $reqs  # before the .pth: pip must not see (and try to replace) BASE's packages
    local own base_site
    own="$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    base_site="$(cd "$("$base/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" && pwd)"
    echo "import site; site.addsitedir('$base_site')" > "$own/zz_typed_pallas_base.pth"
    "$dir/bin/python" -c "import jax, typed_pallas, mypy" || { echo "error: $dir is not usable" >&2; return 1; }
    echo "$stamp" > "$dir/.typed-pallas-stamp"
}

ensure_old_venv() {  # .venv311: the oldest end of the JAX range (scripts/check, test-one --jax old)
    ensure_venv .venv311 3.11 "jax==0.10.2 jaxlib==0.10.2"
}

#: Each environment pins one checked release (typed_pallas._versions.CHECKED_RELEASES), so
#: CI is reproducible: the newest end is the newest checked release, and Python 3.13's slice
#: runs the release before it. scripts/test-newest tries whatever pip resolves today.
ensure_new_venv() {  # .venv312: the newest end of the JAX range (lint, test-one's default)
    ensure_venv .venv312 3.12 "jax==0.12.1 jaxlib==0.12.1"
}

ensure_all_venvs() {
    ensure_old_venv
    ensure_new_venv
    ensure_venv .venv313 3.13 "jax==0.12.0.1 jaxlib==0.12.0.1" "-e .[mypy] pytest>=8 pytest-mypy-plugins>=3.1 absl-py>=2"
    ensure_layered_venv .venv312-mypy-oldest .venv312 "mypy==$MYPY_OLDEST"
}

run_ruff() {  # ruff check and ruff format --check over the repository (the test extra's pinned ruff)
    local status=0
    echo "=== ruff $(.venv312/bin/ruff --version | cut -d' ' -f2): check and format --check"
    .venv312/bin/ruff check . || status=1
    .venv312/bin/ruff format --check . || status=1
    return $status
}
