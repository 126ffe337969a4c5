"""Static cases for the safe patterns: dispatch, pick_lowering, import_backend, redispatch.

Convention: tests/assert_type/README.md. Lines without comments must type-check; each
error line carries one targeted ignore per checker. The branch signatures use a local
``Block`` type so the cases do not depend on how each checker resolves ``jax.Array``.
"""

from __future__ import annotations

from typing import Any, Literal, assert_type

import typed_pallas as tp
from typed_pallas import GPU, TPU, PlatformFn
from typed_pallas._dispatch import Dispatch
from typed_pallas._select import Redispatch


class Block:
    """Stands for an array type."""


@tp.platform("tpu")
def tpu_attention(x: Block, *, block: int = 128) -> Block:
    return x


@tp.platform("gpu")
def gpu_attention(x: Block, *, block: int = 128) -> Block:
    return x


def attention_reference(x: Block, *, block: int = 128) -> Block:
    return x


def takes_int(x: int) -> int:
    return x


def tpu_pallas_call() -> PlatformFn[TPU, ..., Any]:
    """What typed_pallas.pallas_call returns for TPU params (pinned in check_typed_api.py)."""
    raise NotImplementedError


def triton_pallas_call() -> PlatformFn[GPU, ..., Any]:
    """What typed_pallas.pallas_call returns for Triton params."""
    raise NotImplementedError


def current_backend() -> str:
    return "cpu"


x = Block()

# case: dispatch-ok: each kernel in its own slot, a reference fallback
attention = tp.dispatch(tpu=tpu_attention, gpu=gpu_attention, default=attention_reference)
assert_type(attention(x), Block)
assert_type(attention(x, block=64), Block)
assert isinstance(attention, Dispatch)

# case: dispatch-cuda-rocm: cuda= and rocm= take gpu kernels
assert_type(
    tp.dispatch(cuda=gpu_attention, rocm=gpu_attention, default=attention_reference)(x), Block
)

# case: dispatch-typed-pallas-call: kernels built by typed_pallas.pallas_call fit their slots
assert_type(tp.dispatch(tpu=tpu_pallas_call(), gpu=triton_pallas_call())(x), Any)

# case: dispatch-gpu-as-tpu: a gpu kernel passed as tpu=
tp.dispatch(tpu=gpu_attention, default=attention_reference)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: dispatch-tpu-as-gpu: a tpu kernel passed as gpu=
tp.dispatch(gpu=tpu_attention, default=attention_reference)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: dispatch-tpu-as-cuda: a tpu kernel passed as cuda=
tp.dispatch(cuda=tpu_attention)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: dispatch-tpu-as-rocm: a tpu kernel passed as rocm=
tp.dispatch(rocm=tpu_attention)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: dispatch-pallas-call-wrong-slot: a Triton pallas_call passed as tpu=
tp.dispatch(tpu=triton_pallas_call())  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: dispatch-untagged-kernel: an untagged callable is not a tpu kernel
tp.dispatch(tpu=attention_reference)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: dispatch-signature-mismatch: a default with another signature
tp.dispatch(tpu=tpu_attention, default=takes_int)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: dispatch-wrong-call: the dispatched callable keeps the branches' signature
attention("not a block")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: pick-lowering-literal: the answer is a literal
assert_type(tp.pick_lowering("tpu"), Literal["tpu"])
assert_type(tp.pick_lowering("cuda"), Literal["cuda"])
assert_type(tp.pick_lowering("gpu"), Literal["cuda", "rocm"])
assert_type(tp.pick_lowering(), Literal["tpu", "cuda", "rocm", "cpu"])

# case: pick-lowering-str: any string (e.g. jax.default_backend()) gives the union
assert_type(tp.pick_lowering(current_backend()), Literal["tpu", "cuda", "rocm", "cpu"])

# case: redispatch-signature: redispatch keeps the candidates' signature
fallback = tp.redispatch(tpu_attention, attention_reference)
assert_type(fallback(x), Block)
assert isinstance(fallback, Redispatch)

# case: redispatch-wrong-call: calling it with the wrong argument
fallback(3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: import-backend-any: import_backend returns the module, untyped
tp.import_backend({"tpu": "json", "default": "json"}).dumps  # noqa: B018
