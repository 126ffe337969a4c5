"""jax's own ``pallas.ops`` as installed in this venv, read by the library reader.

The 47 public entry functions of ``jax.experimental.pallas.ops`` (the list of
``shared/reference/library-kernels.md`` section 2: TPU 22, Triton 13, Mosaic GPU 11,
neutral 1) and what the reader infers for each, measured on jax 0.10.2, 0.12.0.1 and
0.12.1, asked without a JAX release (Mosaic GPU's answer for rocm depends on it, so
those entries say cuda and rocm). jax 0.12.1 no longer ships the Triton ops (``ops/gpu``
keeps only the ``*_mgpu`` modules: ``REMOVED``), so there 34 entries remain; an entry of
a module the release does not ship gives no requirement (and no crash). The answers are
otherwise the same at every release; the chains' line numbers are not. The 14 without a
requirement, and why:

* ``tpu.example_kernel.double``: no params, no evidence (neutral);
* the 9 ``tpu.random`` entries: their only TPU trait is ``pltpu.SMEM`` in block specs,
  which is not evidence (it lowers with Triton params, ``evidence_tables``);
* ``tpu.all_gather.all_gather``: returns early when the axis has size 1, and runs its
  kernel through ``shard_map`` (not a function-keeping call);
* ``SplashAttentionKernel``: ``interpret`` reaches its kernels through ``**kwargs``, at
  construction or at call time, so no caller can be held to it (its factories
  ``make_splash_*`` pass it explicitly and have the requirement);
* ``gpu.layer_norm.layer_norm_backward``, ``gpu.rms_norm.rms_norm_backward``: return
  early on the ``backward_pass_impl == "xla"`` path, which runs no kernel.

The reader never imports jax: this test finds the installed jax with ``find_spec``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Iterable
from pathlib import Path

import pytest
from library_fakes import platforms_of

from typed_pallas_mypy.inference import Inference

OPS = "jax.experimental.pallas.ops."
TPU = "tpu"
TRITON = "cuda,rocm"
#: Mosaic GPU params never lower for tpu; whether rocm refuses them depends on the JAX
#: release (``_platforms.MOSAIC_GPU_ROCM_REFUSED_FROM``: before it JAX's answer depends
#: on what was lowered before), and ``facts`` is given none: rocm is not excluded
MOSAIC_GPU = "cuda,rocm"
NONE = "none"
#: a factory: calling it builds a kernel object (nothing lowers); calling what it
#: returns lowers only for TPU
RETURNS_TPU = "returns tpu"

#: entry (under ``jax.experimental.pallas.ops``) -> platforms of its requirement.
ENTRIES: dict[str, str] = {
    "gpu.all_gather_mgpu.all_gather": MOSAIC_GPU,
    "gpu.attention.mha": TRITON,
    "gpu.attention_mgpu.attention": MOSAIC_GPU,
    "gpu.attention_mgpu.attention_with_pipeline_emitter": MOSAIC_GPU,
    "gpu.blackwell_matmul_mgpu.matmul_kernel": MOSAIC_GPU,
    "gpu.blackwell_ragged_dot_mgpu.ragged_dot_kernel": MOSAIC_GPU,
    "gpu.collective_matmul_mgpu.all_gather_lhs_matmul": MOSAIC_GPU,
    "gpu.decode_attention.decode_attn_unbatched": TRITON,
    "gpu.decode_attention.mqa": TRITON,
    "gpu.decode_attention.gqa": TRITON,
    "gpu.hopper_matmul_mgpu.matmul": MOSAIC_GPU,
    "gpu.hopper_mixed_type_matmul_mgpu.mixed_matmul_kernel": MOSAIC_GPU,
    "gpu.layer_norm.layer_norm_forward": TRITON,
    "gpu.layer_norm.layer_norm_backward": NONE,
    "gpu.layer_norm.layer_norm": TRITON,
    "gpu.paged_attention.paged_attention_unbatched": TRITON,
    "gpu.paged_attention.paged_attention": TRITON,
    "gpu.ragged_dot_mgpu.ragged_dot": MOSAIC_GPU,
    "gpu.reduce_scatter_mgpu.reduce_scatter": MOSAIC_GPU,
    "gpu.rms_norm.rms_norm_forward": TRITON,
    "gpu.rms_norm.rms_norm_backward": NONE,
    "gpu.rms_norm.rms_norm": TRITON,
    "gpu.softmax.softmax": TRITON,
    "gpu.transposed_ragged_dot_mgpu.transposed_ragged_dot": MOSAIC_GPU,
    "tpu.all_gather.all_gather": NONE,
    "tpu.example_kernel.double": NONE,
    "tpu.flash_attention.flash_attention": TPU,
    "tpu.matmul.matmul": TPU,
    "tpu.megablox.gmm.gmm": TPU,
    "tpu.megablox.gmm.tgmm": TPU,
    "tpu.megablox.ops.gmm": TPU,
    "tpu.paged_attention.paged_attention_kernel.paged_attention": TPU,
    "tpu.ragged_paged_attention.kernel.ragged_paged_attention": TPU,
    "tpu.random.philox.philox_4x32_kernel": NONE,
    "tpu.random.philox.philox_4x32_count": NONE,
    "tpu.random.philox.philox_split": NONE,
    "tpu.random.philox.philox_random_bits": NONE,
    "tpu.random.philox.philox_fold_in": NONE,
    "tpu.random.philox.plphilox_prng_impl": NONE,
    "tpu.random.threefry.threefry_2x32_count": NONE,
    "tpu.random.threefry.plthreefry_random_bits": NONE,
    "tpu.random.threefry.plthreefry_prng_impl": NONE,
    "tpu.splash_attention.splash_attention_kernel.SplashAttentionKernel": NONE,
    "tpu.splash_attention.splash_attention_kernel.make_splash_mha": RETURNS_TPU,
    "tpu.splash_attention.splash_attention_kernel.make_splash_mqa": RETURNS_TPU,
    "tpu.splash_attention.splash_attention_kernel.make_splash_mha_single_device": RETURNS_TPU,
    "tpu.splash_attention.splash_attention_kernel.make_splash_mqa_single_device": RETURNS_TPU,
}

#: release (a prefix of jax's version) -> the modules of ``ENTRIES`` it does not ship
REMOVED: dict[tuple[int, ...], frozenset[str]] = {
    (0, 10): frozenset(),
    (0, 12, 0): frozenset(),
    (0, 12, 1): frozenset(
        {
            "gpu.attention",
            "gpu.decode_attention",
            "gpu.layer_norm",
            "gpu.paged_attention",
            "gpu.rms_norm",
            "gpu.softmax",
        }
    ),
}

#: release -> how many of the entries it ships get each answer.
COUNTS: dict[tuple[int, ...], dict[str, int]] = {
    # the 11 Triton and 11 Mosaic GPU entries alike (MOSAIC_GPU == TRITON, no release)
    (0, 10): {TPU: 7, RETURNS_TPU: 4, TRITON: 11 + 11, NONE: 14},
    (0, 12, 0): {TPU: 7, RETURNS_TPU: 4, TRITON: 11 + 11, NONE: 14},
    (0, 12, 1): {TPU: 7, RETURNS_TPU: 4, MOSAIC_GPU: 11, NONE: 12},
}

FA = "jax/experimental/pallas/ops/tpu/flash_attention.py"
GMM = "jax/experimental/pallas/ops/tpu/megablox/gmm.py"
SPLASH = "jax/experimental/pallas/ops/tpu/splash_attention/splash_attention_kernel.py"
MHA = "jax/experimental/pallas/ops/gpu/attention.py"
MGPU = "jax/experimental/pallas/ops/gpu/hopper_matmul_mgpu.py"


def _splash_chain(lines: tuple[int, ...]) -> tuple[str, ...]:
    make, made, call, call_at, impl, impl_at, custom, custom_at, fwd, fwd_at = lines
    return (
        f"_make_splash_attention ({SPLASH}:{make}) returns a SplashAttentionKernel at "
        f"{SPLASH}:{made}, which lowers only for tpu",
        f"__call__ ({SPLASH}:{call}) lowers only for tpu: it calls _splash_attention at "
        f"{SPLASH}:{call_at}",
        f"_splash_attention ({SPLASH}:{impl}) lowers only for tpu: it calls "
        f"_splash_attention_custom at {SPLASH}:{impl_at}",
        f"_splash_attention_custom ({SPLASH}:{custom}) lowers only for tpu: it calls "
        f"_splash_attention_forward at {SPLASH}:{custom_at}",
        f"_splash_attention_forward ({SPLASH}:{fwd}) lowers only for tpu: its pl.pallas_call "
        f"at {SPLASH}:{fwd_at} takes Mosaic TPU params",
    )


_FLASH_ATTENTION = (
    f"flash_attention ({FA}:140) lowers only for tpu: it calls _flash_attention at {FA}:199",
    f"_flash_attention ({FA}:205) lowers only for tpu: it calls _flash_attention_impl at {FA}:217",
    f"_flash_attention_impl ({FA}:589) lowers only for tpu: its pl.pallas_call at {FA}:758 "
    "takes Mosaic TPU params",
)
_GMM = (
    f"gmm ({GMM}:314) lowers only for tpu: its pl.pallas_call at {GMM}:526 takes Mosaic TPU params",
)
_MGPU = (
    f"matmul ({MGPU}:232) lowers only for cuda, rocm: its plgpu.kernel at {MGPU}:261 takes "
    "Mosaic GPU params",
)
#: ``make_splash_*`` are partials of ``_make_splash_attention``, whose keyword-only
#: ``interpret`` (default False) reaches every kernel it builds: a caller passing
#: ``interpret=True`` runs them interpreted (-1: keyword-only)
_SPLASH_INTERPRET = ("interpret", -1)

_MHA_012 = (
    (
        f"mha ({MHA}:229) lowers only for cuda, rocm: its pl.pallas_call at {MHA}:294 "
        "takes Triton params",
    ),
    ("interpret", 11),
)

#: release -> entry -> (chain, interpret), word for word.
CHAINS: dict[tuple[int, ...], dict[str, tuple[tuple[str, ...], tuple[str, int] | None]]] = {
    (0, 10): {
        "tpu.flash_attention.flash_attention": (_FLASH_ATTENTION, None),
        "tpu.megablox.gmm": (_GMM, ("interpret", 8)),
        "tpu.splash_attention.splash_attention_kernel.make_splash_mha": (
            _splash_chain((2544, 2619, 2462, 2469, 2388, 2427, 1213, 1242, 900, 1143)),
            _SPLASH_INTERPRET,
        ),
        "gpu.attention.mha": (
            (
                f"mha ({MHA}:220) lowers only for cuda, rocm: its pl.pallas_call at {MHA}:285 "
                "takes Triton params",
            ),
            ("interpret", 11),
        ),
        "gpu.hopper_matmul_mgpu.matmul": (_MGPU, None),
    },
    (0, 12, 0): {
        "tpu.flash_attention.flash_attention": (_FLASH_ATTENTION, None),
        "tpu.megablox.gmm": (_GMM, ("interpret", 8)),
        "tpu.splash_attention.splash_attention_kernel.make_splash_mha": (
            _splash_chain((2537, 2612, 2455, 2462, 2381, 2420, 1206, 1235, 900, 1142)),
            _SPLASH_INTERPRET,
        ),
        "gpu.attention.mha": _MHA_012,
        "gpu.hopper_matmul_mgpu.matmul": (_MGPU, None),
    },
    (0, 12, 1): {
        "tpu.flash_attention.flash_attention": (_FLASH_ATTENTION, None),
        "tpu.megablox.gmm": (_GMM, ("interpret", 8)),
        "tpu.splash_attention.splash_attention_kernel.make_splash_mha": (
            _splash_chain((2548, 2635, 2466, 2473, 2392, 2431, 1217, 1246, 912, 1153)),
            _SPLASH_INTERPRET,
        ),
        "gpu.hopper_matmul_mgpu.matmul": (_MGPU, None),
    },
}


def _release(measured: Iterable[tuple[int, ...]]) -> tuple[int, ...]:
    """The longest key of ``measured`` that jax's version starts with (fails when none)."""
    version = tuple(int(part) for part in importlib.metadata.version("jax").split(".")[:4])
    keys = [key for key in measured if version[: len(key)] == key]
    assert keys, f"jax {version} is not measured here: add its expectations"
    return max(keys, key=len)


def _module_of(entry: str) -> str:
    """The module an entry is in: ``ENTRIES``' names are module paths plus one name."""
    return entry.rsplit(".", 1)[0]


def _shipped(entry: str) -> bool:
    """Whether the installed jax has the entry's module (found, not imported)."""
    return importlib.util.find_spec(OPS + _module_of(entry)) is not None


@pytest.fixture(scope="module")
def facts() -> Inference:
    spec = importlib.util.find_spec("jax")
    assert spec is not None and spec.submodule_search_locations
    site_packages = Path(next(iter(spec.submodule_search_locations))).parent
    return Inference([str(site_packages)], None)


def test_the_release_ships_the_modules_measured() -> None:
    """The modules this release lacks are exactly those listed for it (found by
    ``find_spec``, independently of the reader)."""
    removed = REMOVED[_release(REMOVED)]
    missing = {_module_of(name) for name in ENTRIES if not _shipped(name)}
    assert missing == removed


def test_counts_of_the_47_entries(facts: Inference) -> None:
    assert len(ENTRIES) == 47
    removed = REMOVED[_release(REMOVED)]
    found: dict[str, str] = {}
    for name in ENTRIES:
        if _module_of(name) in removed:
            continue
        platforms = platforms_of(facts.requirement(OPS + name))
        result = platforms_of(facts.result_requirement(OPS + name))
        if platforms is not None:
            found[name] = ",".join(sorted(platforms))
        elif result is not None:
            found[name] = "returns " + ",".join(sorted(result))
        else:
            found[name] = NONE
    assert found == {name: v for name, v in ENTRIES.items() if _module_of(name) not in removed}
    counts: dict[str, int] = {}
    for value in found.values():
        counts[value] = counts.get(value, 0) + 1
    assert counts == COUNTS[_release(COUNTS)]


def test_an_entry_of_a_module_not_shipped_gives_nothing(facts: Inference) -> None:
    """No requirement, no result, no crash for a module the release lacks: the Triton ops
    where jax removed them, and at every release a module jax never had; the entries of
    the modules it ships (the firing side) are in the test above."""
    absent = [name for name in ENTRIES if not _shipped(name)]
    absent.append("gpu.no_such_module.mha")
    for name in absent:
        assert facts.requirement(OPS + name) is None, name
        assert facts.result_requirement(OPS + name) is None, name
    assert facts.module_map(OPS + "gpu.no_such_module") == []


def test_chains_word_for_word(facts: Inference) -> None:
    for name, (chain, interpret) in CHAINS[_release(CHAINS)].items():
        found = facts.requirement(OPS + name) or facts.result_requirement(OPS + name)
        assert found is not None, name
        assert found.chain == chain, name
        assert found.interpret == interpret, name


def test_jax_framework_modules_are_not_read(facts: Inference) -> None:
    facts.module_map("jax.experimental.pallas.ops")
    read = facts.modules_read()
    assert len(read) >= 30
    assert all(name == OPS[:-1] or name.startswith(OPS) for name in read)
