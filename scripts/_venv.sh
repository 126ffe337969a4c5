# Shared by scripts/test, scripts/check and .ci/run: make (or refresh) the two
# project environments, one per end of the supported JAX range.
#   .venv311: Python 3.11, jax 0.10.x (the oldest supported)
#   .venv312: Python 3.12, jax 0.12.x (the newest supported)
# A venv is rebuilt when pyproject.toml changes (stamp file inside it).

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

ensure_venv() {  # ensure_venv DIR PYVERSION "JAX REQUIREMENTS"
    local dir="$1" pyver="$2" jaxreq="$3" stamp
    stamp="$(cat pyproject.toml | sha256sum | cut -c1-16) $jaxreq"
    if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.typed-pallas-stamp" 2>/dev/null)" = "$stamp" ]; then
        return 0
    fi
    echo "--- preparing $dir (Python $pyver, $jaxreq)"
    local py; py="$(find_python "$pyver")"
    [ -x "$dir/bin/python" ] || "$py" -m venv "$dir"
    "$dir/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
    # shellcheck disable=SC2086
    "$dir/bin/python" -m pip install -q --disable-pip-version-check $jaxreq -e ".[test]" 2>&1 | grep -v '^WARNING: Location' || true
    "$dir/bin/python" -c "import jax, typed_pallas, mypy" || { echo "error: $dir is not usable" >&2; return 1; }
    echo "$stamp" > "$dir/.typed-pallas-stamp"
}

ensure_all_venvs() {
    ensure_venv .venv311 3.11 "jax==0.10.2 jaxlib==0.10.2"
    ensure_venv .venv312 3.12 "jax>=0.12,<0.13 jaxlib>=0.12,<0.13"
}
