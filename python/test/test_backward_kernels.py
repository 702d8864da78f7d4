"""Input checks of tiledattn.backward_kernels (no GPU needed: each error is
raised before the runtime or a kernel is touched)."""

import json

import pytest
import torch
from test_attn_mask import needs_compiler

import tiledattn
from tiledattn.backward_kernels import attention_backward


def _inputs(b=1, h=2, s=64, d=128, dtype=torch.bfloat16):
    q = torch.zeros(b, h, s, d, dtype=dtype)
    return q, q, q, q, torch.zeros(b, h, s), q


def test_refuses_other_dtypes():
    q, k, v, out, lse, grad = _inputs(dtype=torch.float32)
    with pytest.raises(
        tiledattn.UnsupportedInputError, match="'q' to be a .* bfloat16 or float16 tensor"
    ):
        attention_backward(q, k, v, out, lse, grad, 0.1)
    # one dtype for all: q's
    q, k, v, out, lse, grad = _inputs(dtype=torch.float16)
    with pytest.raises(tiledattn.UnsupportedInputError, match="'k' to be a .* float16 tensor"):
        attention_backward(q, k.bfloat16(), v, out, lse, grad, 0.1)


def test_a_smaller_head_dim_is_derived_from_the_program():
    # Head dim 96 on main_bf16_d128_rows.mlir's 128-column tiles: the
    # compiler's tiledattn-derive-program changes the operands' head dim.
    from tiledattn.backward_kernels import HEAD_DIMS, derivation, program_forms, tile_head_dim

    assert derivation("main_bf16_d128_rows.mlir") == ""
    assert derivation("main_bf16_d128_rows.mlir", torch.bfloat16, 128) == ""
    assert (
        derivation("main_bf16_d128_rows.mlir", torch.float16, 96)
        == "tiledattn-derive-program{element-type=f16 head-dim=96}"
    )
    assert [tile_head_dim(d) for d in HEAD_DIMS] == [64] * 4 + [128] * 4 + [192] * 4 + [256] * 4
    assert {tile_head_dim(d) for d in (8, 72, 136, 0)} == {None}
    with pytest.raises(ValueError, match="whose tiles are 128 columns\\) but got 64"):
        derivation("main_bf16_d128_rows.mlir", head_dim=64)
    padded = {(n, d) for n, _, d, _ in program_forms(HEAD_DIMS)}
    assert ("main_bf16_d64_rows.mlir", 32) in padded and ("dq_bf16_d128.mlir", 96) in padded
    assert ("main_bf16_d64_rows.mlir", 96) not in padded


def test_the_causal_forms_are_derived_from_their_programs():
    # No file of their own: tiledattn-derive-program{mask=causal} makes the
    # program's identity tiledattn.mask and its loop bounds
    # (first_query_block, key_block_end) causal.
    from tiledattn.backward_kernels import (
        CAUSAL_FORMS,
        DETERMINISTIC_PROGRAMS,
        MAIN_PROGRAMS,
        derivation,
        source,
    )

    causal_mains = {name for name, p in MAIN_PROGRAMS.items() if p.causal}
    causal_pairs = {n for (_, c), pair in DETERMINISTIC_PROGRAMS.items() if c for n in pair}
    assert causal_mains | causal_pairs == set(CAUSAL_FORMS)
    for name, file in CAUSAL_FORMS.items():
        text = source(name).read_text()
        assert source(name).name == file and not source(name).with_name(name).exists()
        bound = "key_block_end" if name.startswith("dq_") else "first_query_block"
        assert f"tiledattn.{bound}" in text and "tiledattn.mask" in text, name
        assert " causal" not in text.split("func.func")[1], name
    assert source("main_bf16_d128_rows_causal.mlir").name == "main_bf16_d128_rows.mlir"
    assert (
        not source("main_bf16_d128_rows_causal.mlir")
        .with_name("main_bf16_d128_rows_causal.mlir")
        .exists()
    )
    assert derivation("main_bf16_d64_rows_causal.mlir") == "tiledattn-derive-program{mask=causal}"
    assert (
        derivation("main_bf16_d128_rows_causal.mlir", torch.float16, 96)
        == "tiledattn-derive-program{mask=causal element-type=f16 head-dim=96}"
    )


def test_every_program_has_a_float16_form_derived():
    from tiledattn.backward_kernels import (
        CAUSAL_FORMS,
        DTYPES,
        PROGRAMS,
        derivation,
        program_forms,
    )

    forms = list(program_forms())
    assert len(forms) == len(DTYPES) * (len(list(PROGRAMS.glob("*.mlir"))) + len(CAUSAL_FORMS))
    for name, dtype, _, derive in forms:
        assert derive == derivation(name, dtype)
        options = ["mask=causal"] * (name in CAUSAL_FORMS)
        options += ["element-type=f16"] * (dtype == torch.float16)
        assert derive == ("tiledattn-derive-program{" + " ".join(options) + "}") * bool(options)


@needs_compiler
def test_a_derived_form_compiles_to_the_derived_kernel(tmp_path):
    # The compiler derives the form: the kernel's name, types and head dim.
    from tiledattn.backward_kernels import PROGRAMS, derivation

    kernel = tiledattn.compile(
        PROGRAMS / "main_bf16_d128_rows.mlir",
        cache=tmp_path,
        derive=derivation("main_bf16_d128_rows.mlir", torch.float16, 96),
    )
    manifest = json.loads((kernel.path / "manifest.json").read_text())
    assert manifest["kernel"] == "bwd_main_f16_d96_rows"
    assert (manifest["dtype"], manifest["head_dim"]) == ("f16", 96)
    plain = tiledattn.compile(PROGRAMS / "main_bf16_d128_rows.mlir", cache=tmp_path)
    assert plain.path != kernel.path  # keyed by the text and the derivation


def test_refuses_other_head_dims():
    # not a multiple of 16, or past 256
    for d in (72, 8, 136, 272):
        q, k, v, out, lse, grad = _inputs(d=d)
        with pytest.raises(
            tiledattn.UnsupportedInputError,
            match=rf"a head dim the programs take, a multiple of 16 up to 256 .* "
            rf"\(1, 2, 64, {d}\)",
        ):
            attention_backward(q, k, v, out, lse, grad, 0.1)
    # the deterministic programs' tiles end at 128 columns
    q, k, v, out, lse, grad = _inputs(d=256)
    with pytest.raises(tiledattn.UnsupportedInputError, match="head dim up to 128 for determin"):
        attention_backward(q, k, v, out, lse, grad, 0.1, deterministic=True)
    # one head dim for all
    q, k, v, out, lse, grad = _inputs(d=96)
    with pytest.raises(tiledattn.UnsupportedInputError, match=r"'k' to be a \[B, H, S, 96\]"):
        attention_backward(q, k[..., :80], v, out, lse, grad, 0.1)
    # a program of another head dim, named
    q, k, v, out, lse, grad = _inputs(d=64)
    with pytest.raises(ValueError, match="of head dim 64 but got 'main_bf16_d128_rows.mlir'"):
        attention_backward(q, k, v, out, lse, grad, 0.1, main_program="main_bf16_d128_rows.mlir")
    with pytest.raises(ValueError, match="causal attention"):  # the non-causal form, named
        attention_backward(
            q, k, v, out, lse, grad, 0.1, causal=True, main_program="main_bf16_d64_rows.mlir"
        )


def test_the_one_consumer_program_refuses_gqa_and_cross_attention():
    q, _, _, out, lse, grad = _inputs()
    one = dict(main_program="main_bf16_d128.mlir")
    k = torch.zeros(1, 1, 64, 128, dtype=torch.bfloat16)
    with pytest.raises(tiledattn.UnsupportedInputError, match="no GQA or cross-attention"):
        attention_backward(q, k, k, out, lse, grad, 0.1, **one)
    k = torch.zeros(1, 2, 65, 128, dtype=torch.bfloat16)
    with pytest.raises(tiledattn.UnsupportedInputError, match="one length"):
        attention_backward(q, k, k, out, lse, grad, 0.1, **one)


def test_the_row_form_refuses_kv_that_fit_no_group():
    # GQA needs K/V heads dividing q's, q's batch, and k and v of one shape.
    q, _, _, out, lse, grad = _inputs(h=3)
    rows = dict(main_program="main_bf16_d128_rows.mlir")
    for k, v in (
        (torch.zeros(1, 2, 64, 128), torch.zeros(1, 2, 64, 128)),
        (torch.zeros(2, 1, 64, 128), torch.zeros(2, 1, 64, 128)),
        (torch.zeros(1, 1, 64, 128), torch.zeros(1, 1, 65, 128)),
    ):
        k, v = k.bfloat16(), v.bfloat16()
        with pytest.raises(tiledattn.UnsupportedInputError, match="Hkv dividing q's heads"):
            attention_backward(q, k, v, out, lse, grad, 0.1, **rows)


def test_refuses_a_wrong_lse_and_grad_out():
    q, k, v, out, lse, grad = _inputs()
    with pytest.raises(tiledattn.UnsupportedInputError, match="'lse' to be a float32"):
        attention_backward(q, k, v, out, lse.double(), grad, 0.1)
    with pytest.raises(tiledattn.UnsupportedInputError, match="'lse' to be a float32"):
        attention_backward(q, k, v, out, lse[..., :-1], grad, 0.1)
    with pytest.raises(tiledattn.UnsupportedInputError, match="'grad_out'"):
        attention_backward(q, k, v, out, lse, grad[:, :, :-1], 0.1)


def test_refuses_a_scale_that_is_not_positive():
    q, k, v, out, lse, grad = _inputs()
    with pytest.raises(tiledattn.UnsupportedInputError, match="positive 'scale'"):
        attention_backward(q, k, v, out, lse, grad, 0.0)


def test_refuses_an_unknown_dq_layout():
    q, k, v, out, lse, grad = _inputs()
    with pytest.raises(ValueError, match="'dq_layout' in .* but got 'columns'"):
        attention_backward(q, k, v, out, lse, grad, 0.1, dq_layout="columns")


def test_refuses_an_unknown_main_program(monkeypatch):
    q, k, v, out, lse, grad = _inputs()
    with pytest.raises(ValueError, match="main program .* but got 'main_fast.mlir'"):
        attention_backward(q, k, v, out, lse, grad, 0.1, main_program="main_fast.mlir")
    monkeypatch.setenv("TILEDATTN_BACKWARD_MAIN", "rows")
    with pytest.raises(ValueError, match=r"TILEDATTN_BACKWARD_MAIN.* but got 'rows'"):
        attention_backward(q, k, v, out, lse, grad, 0.1)


def test_every_main_program_is_in_the_package():
    # backward_kernels.MAIN_PROGRAMS names files the package carries, or the
    # causal forms derived from them (scripts/package_kernels.py compiles
    # every program_forms()).
    from tiledattn.backward_kernels import (
        CAUSAL_FORMS,
        DEFAULT_MAIN,
        MAIN_PROGRAMS,
        PROGRAMS,
        source,
    )

    assert DEFAULT_MAIN in MAIN_PROGRAMS
    assert all(source(name).is_file() for name in MAIN_PROGRAMS)
    files = [p.name for p in PROGRAMS.glob("main_*.mlir")]
    causal_mains = [name for name in CAUSAL_FORMS if name.startswith("main_")]
    assert sorted([*files, *causal_mains]) == sorted(MAIN_PROGRAMS)


def test_autograd_sends_only_what_the_programs_cover():
    # tiledattn.backward sends a forward's backward to the programs only for
    # CUDA bf16 or float16, the forms in IN_AUTOGRAD, K/V of a shape the
    # program takes.
    from tiledattn import backward_kernels
    from tiledattn.backward_kernels import covers

    meta = dict(device="meta", dtype=torch.bfloat16)
    q = torch.empty(1, 2, 64, 128, **meta)
    assert not covers(q, q, q, False)  # not CUDA

    class Cuda:
        def __init__(self, shape, dtype=torch.bfloat16):
            self.shape, self.dtype, self.is_cuda = torch.Size(shape), dtype, True

        def dim(self):
            return len(self.shape)

    q = Cuda((1, 2, 64, 128))
    assert covers(q, q, q, False)
    # causal, head dim 64 and float16: their forms, once their GPU tests
    # have passed (IN_AUTOGRAD); asked for by name, they run
    in_autograd = backward_kernels.IN_AUTOGRAD
    assert covers(q, q, q, True) == ((backward_kernels.CAUSAL_MAIN, q.dtype, 128) in in_autograd)
    assert covers(q, q, q, True, "main_bf16_d128_rows_causal.mlir")
    q64 = Cuda((1, 2, 64, 64))
    # head dim 64: in autograd since its GPU tests passed (IN_AUTOGRAD's note)
    assert covers(q64, q64, q64, False)
    assert covers(q64, q64, q64, False, "main_bf16_d64_rows.mlir")
    # head dims on the programs' tiles: those whose GPU tests passed
    for d in backward_kernels.HEAD_DIMS:
        qd = Cuda((1, 2, 64, d))
        program = backward_kernels._DEFAULTS[(backward_kernels.tile_head_dim(d), False)]
        assert covers(qd, qd, qd, False) == ((program, qd.dtype, d) in in_autograd), d
    assert covers(*(Cuda((1, 2, 64, 96)),) * 3, False)
    # causal head dim 64: main_bf16_d64_rows_causal.mlir (thirty-eighth session)
    assert covers(q64, q64, q64, True)
    assert covers(q64, q64, q64, True, "main_bf16_d64_rows_causal.mlir")
    with pytest.raises(ValueError, match="causal attention"):
        covers(q, q, q, True, "main_bf16_d128.mlir")  # a program of the other kind
    f16 = Cuda((1, 2, 64, 128), torch.float16)
    assert covers(f16, f16, f16, False) == (
        (backward_kernels.DEFAULT_MAIN, f16.dtype, 128) in in_autograd
    )
    assert covers(f16, f16, f16, False, backward_kernels.DEFAULT_MAIN)
    assert not covers(f16, q, q, False, backward_kernels.DEFAULT_MAIN)  # mixed dtypes
    assert not covers(*(Cuda((1, 2, 64, 128), torch.float32),) * 3, False, "main_bf16_d128.mlir")
    assert not covers(*(Cuda((1, 2, 64, 72)),) * 3, False)  # no program's head dim
    empty = Cuda((0, 2, 64, 128))
    assert not covers(empty, empty, empty, False)
    # GQA and cross-attention: the row form's, not the one-consumer program's.
    gqa, cross = Cuda((1, 1, 64, 128)), Cuda((1, 2, 32, 128))
    rows = "main_bf16_d128_rows.mlir"
    for kv in (gqa, cross, Cuda((1, 1, 300, 128))):
        assert not covers(q, kv, kv, False, "main_bf16_d128.mlir")
        assert covers(q, kv, kv, False, rows)
    assert not covers(q, q, gqa, False, rows)  # k and v of two shapes
    assert not covers(Cuda((1, 3, 64, 128)), q, q, False, rows)  # 2 heads do not divide 3
    assert not covers(q, Cuda((2, 2, 64, 128)), Cuda((2, 2, 64, 128)), False, rows)  # batch
    no_keys = Cuda((1, 2, 0, 128))
    assert not covers(q, no_keys, no_keys, False, rows)


@pytest.mark.parametrize("cols", [64, 128])
def test_rows_of_fragments_inverts_the_register_order(cols):
    # tiledattn.bulk_reduce_add's block order, built here from its
    # definition (thread t's register pair j at 2 (128 j + t)), against
    # the postprocess that puts the rows back (64 columns: head dim 64's
    # dQ blocks).
    from tiledattn.backward_kernels import rows_of_fragments

    tile = torch.arange(2 * 64 * cols, dtype=torch.float32).view(2, 64, cols)
    frags = torch.empty(1, 1, 2, 64 * cols)
    for t in range(128):
        for j in range(cols // 4):
            for e in range(2):
                row = 16 * (t // 32) + 8 * (j % 2) + (t % 32) // 4
                col = 8 * (j // 2) + 2 * (t % 4) + e
                frags[0, 0, :, 2 * (128 * j + t) + e] = tile[:, row, col]
    assert torch.equal(rows_of_fragments(frags, cols), tile.view(1, 1, 128, cols))


def test_rows_of_column_halves_puts_each_half_in_its_columns():
    # The two-consumer candidate's dQ blocks: block 2i + c is rows 64i ..
    # 64i + 63, columns 64c .. 64c + 63, each in bulk_reduce_add's order.
    from tiledattn.backward_kernels import rows_of_column_halves

    dq = torch.arange(128 * 128, dtype=torch.float32).view(128, 128)
    frags = torch.empty(1, 1, 4, 64 * 64)
    for block in range(4):
        i, c = divmod(block, 2)
        tile = dq[64 * i : 64 * i + 64, 64 * c : 64 * c + 64]
        for t in range(128):
            for j in range(16):
                for e in range(2):
                    row = 16 * (t // 32) + 8 * (j % 2) + (t % 32) // 4
                    col = 8 * (j // 2) + 2 * (t % 4) + e
                    frags[0, 0, block, 2 * (128 * j + t) + e] = tile[row, col]
    assert torch.equal(rows_of_column_halves(frags), dq.view(1, 1, 128, 128))


@pytest.mark.parametrize("layout", ["halves", "blocks", "rows"])
def test_dq_is_scaled_and_rounded_in_row_order_in_one_pass(layout):
    # What attention_backward returns as dQ: its accumulator in row order,
    # times the scale, in bf16, as the layout functions above define it.
    from tiledattn.backward_kernels import (
        _in_row_order,
        _scaled,
        rows_of_column_halves,
        rows_of_fragments,
    )

    shape = {"halves": (2, 3, 4, 4096), "blocks": (2, 3, 2, 8192), "rows": (2, 3, 128, 128)}[layout]
    acc = torch.randn(shape)
    rows = {"halves": rows_of_column_halves, "blocks": lambda f: rows_of_fragments(f, 128)}.get(
        layout, lambda f: f
    )(acc)
    got = _scaled(_in_row_order(acc, layout), 0.5, torch.bfloat16, 128)
    assert got.is_contiguous() and got.shape == (2, 3, 128, 128)
    assert torch.equal(got, (rows * 0.5).to(torch.bfloat16))
    # A main program that scales dS itself: rounded only.
    assert torch.equal(
        _scaled(_in_row_order(acc, layout), None, torch.bfloat16, 128), rows.bfloat16()
    )


def test_a_main_bundle_must_take_the_main_programs_captures(tmp_path):
    # A candidate bundle that is not a main program (here the preprocess's
    # signature, no captures) is refused, naming its parameters.
    import json

    from tiledattn.backward_kernels import _writes_gradients

    def write(params):  # the fields the runtime's bundle reader requires, and params
        fields = dict(format_version=1, name="m", dtype="bf16", head_dim=128, head_dim_v=128)
        fields.update(causal=False, alignment_bytes=16, params=params)
        (tmp_path / "manifest.json").write_text(json.dumps(fields))
        _writes_gradients.cache_clear()

    params = [{"name": n} for n in ("q", "k", "v", "o", "lse", "scale")]
    write(params)
    with pytest.raises(
        tiledattn.UnsupportedInputError, match="four captures .* but its parameters"
    ):
        _writes_gradients(tmp_path)
    write(params + [{"name": f"capture{i}", "dtype": "f32"} for i in range(4)])
    assert _writes_gradients(tmp_path) is False


def test_a_main_program_of_the_other_causality_is_refused(monkeypatch):
    q, k, v, out, lse, grad = _inputs()
    with pytest.raises(ValueError, match="causal attention .* but got 'main_bf16_d128_rows.mlir'"):
        attention_backward(
            q, k, v, out, lse, grad, 0.1, causal=True, main_program="main_bf16_d128_rows.mlir"
        )
    with pytest.raises(ValueError, match="non-causal .* 'main_bf16_d128_rows_causal.mlir'"):
        attention_backward(
            q, k, v, out, lse, grad, 0.1, main_program="main_bf16_d128_rows_causal.mlir"
        )
    # $TILEDATTN_BACKWARD_MAIN names a non-causal program; causal calls keep theirs.
    from tiledattn.backward_kernels import CAUSAL_MAIN, _main_program

    monkeypatch.setenv("TILEDATTN_BACKWARD_MAIN", "main_bf16_d128.mlir")
    assert _main_program(None, causal=True) == CAUSAL_MAIN
    assert _main_program(None) == "main_bf16_d128.mlir"


def test_each_tile_head_dim_has_a_deterministic_pair_causal_and_not():
    from tiledattn.backward_kernels import CAUSAL_FORMS, DETERMINISTIC_PROGRAMS, source

    assert sorted(DETERMINISTIC_PROGRAMS) == [(64, False), (64, True), (128, False), (128, True)]
    for (d, causal), pair in DETERMINISTIC_PROGRAMS.items():
        assert [n.split("_")[0] for n in pair] == ["dkdv", "dq"]
        assert all(source(name).is_file() and f"_d{d}" in name for name in pair)
        assert all((name in CAUSAL_FORMS) == causal for name in pair)


def test_autograd_takes_the_deterministic_programs_only_once_they_are_on(monkeypatch):
    # Under torch.use_deterministic_algorithms autograd keeps the torch-ops
    # backward until IN_AUTOGRAD has the mode (their GPU tests passed).
    from tiledattn import backward_kernels
    from tiledattn.backward_kernels import covers

    class Cuda:
        shape, dtype, is_cuda = torch.Size((1, 2, 64, 128)), torch.bfloat16, True

        def dim(self):
            return 4

    q = Cuda()
    mode = (backward_kernels.DETERMINISTIC, torch.bfloat16, 128)
    assert covers(q, q, q, False, deterministic=True) == (mode in backward_kernels.IN_AUTOGRAD)
    monkeypatch.setattr(backward_kernels, "IN_AUTOGRAD", backward_kernels.IN_AUTOGRAD | {mode})
    assert covers(q, q, q, False, deterministic=True)
    # causal: the derived pair, in autograd as the others
    assert ("dkdv_bf16_d128_causal.mlir", torch.bfloat16, 128) in backward_kernels.IN_AUTOGRAD
    assert covers(q, q, q, True, deterministic=True)
    # head dim 64: the D = 64 pair, in autograd since its GPU tests passed
    q64 = Cuda()
    q64.shape = torch.Size((1, 2, 64, 64))
    assert ("dkdv_bf16_d64.mlir", torch.bfloat16, 64) in backward_kernels.IN_AUTOGRAD
    assert covers(q64, q64, q64, False, deterministic=True)
    q48 = Cuda()
    q48.shape = torch.Size((1, 2, 64, 48))
    assert covers(q48, q48, q48, False, deterministic=True)
