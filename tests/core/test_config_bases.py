"""Configs that cannot drift: each configuration of the registry equals its path's base config
field by field (gemmkit._core.config_fields, every field of gk_config_t) except in the fields named here."""
import pytest

from gemmkit import _core

KERNELS = ("sgemm", "dgemm", "cgemm", "zgemm", "int8", "quant", "hgemm", "wrap", "qadd")
SMALL = "small."  # an entry "small." allows every small-problem threshold to differ

# (arch, uarch) -> (its base config, the fields in which it differs from that base: exactly these). The
# bases are the path roots avx2 and avx512 (csrc/config/common.h, GK_CONFIG_*_BASE); a tuned config's base
# is its path's untuned one.
BF16 = ("bf16", "bf16_needs", "bf16_blocks")  # a path's bfloat16 unit (csrc/config.h)
BASES = {
    ("avx2", "zen2"): (("avx2", "any"), {"uarch", "cpu_match", "sgemm_blocks", SMALL}),
    ("avx_vnni", "any"): (("avx2", "any"), {"arch", "needs", "int8", "int8_blocks"}),
    ("avx512_vnni", "any"): (("avx512", "any"), {"arch", "needs", "int8", "int8_blocks", *BF16}),
    ("avx512_vnni", "zen4"): (("avx512_vnni", "any"), {"uarch", "cpu_match", "int8_blocks", SMALL}),
    ("avx512_vnni", "xeon_amx"): (("avx512_vnni", "any"), {"uarch", "cpu_match", "sgemm", "dgemm", "cgemm", "zgemm",
                                                            SMALL}),
    ("avx512_amx", "any"): (("avx512_vnni", "any"), {"arch", "needs", "int8", "int8_blocks", "sgemm", "dgemm",
                                                      "cgemm", "zgemm", *BF16}),
    ("dotprod", "any"): (("neon", "any"), {"arch", "needs", "int8", "int8_blocks"}),
    ("dotprod", "apple"): (("dotprod", "any"), {"uarch", "cpu_match"}),
    ("i8mm", "any"): (("neon", "any"), {"arch", "needs", "int8"}),
}
ROOTS = {("avx2", "any"), ("avx512", "any"), ("generic", "any"), ("neon", "any")}


def all_configs():
    return {(c["arch"], c["uarch"]): _core.config_fields(i) for i, c in enumerate(_core.configs())}


CONFIGS = all_configs()


def allowed(field, names):
    return field in names or (SMALL in names and field.startswith(SMALL))


def test_every_config_has_a_base_or_is_a_root():
    for key in CONFIGS:
        assert key in ROOTS or key in BASES, f"config {key} has no base in BASES (name its base and fields)"


def test_fields_cover_the_struct():
    fields = CONFIGS[("generic", "any")]
    for name in KERNELS + ("arch", "uarch", "needs", "cpu_match", "sgemm_blocks", "dgemm_blocks", "cgemm_blocks",
                           "zgemm_blocks", "int8_blocks", "small.tiny_max_macs", "small.gemv_pf_bytes"):
        assert name in fields
    with pytest.raises(IndexError):
        _core.config_fields(len(CONFIGS))


@pytest.mark.parametrize("key", sorted(k for k in BASES if k in CONFIGS), ids=lambda k: "-".join(k))
def test_config_equals_its_base_except_named_fields(key):
    base_key, names = BASES[key]
    assert base_key in CONFIGS, f"base {base_key} of {key} is not in this build's registry"
    cfg, base = CONFIGS[key], CONFIGS[base_key]
    assert cfg.keys() == base.keys()
    # no kernel the base has may be missing (a NULL cgemm / zgemm silently means the slower 1m method)
    dropped = [k for k in KERNELS if base[k] != "-" and cfg[k] == "-"]
    assert not dropped, f"{key} drops its base {base_key}'s kernels {dropped}"
    differing = {f for f in cfg if cfg[f] != base[f]}
    unexpected = {f: (base[f], cfg[f]) for f in differing if not allowed(f, names)}
    assert not unexpected, f"{key} differs from its base {base_key} in unnamed fields (base, config): {unexpected}"
    stale = {f for f in names if f != SMALL and f not in differing}
    assert not stale, f"{key}: fields named as overrides equal the base {base_key}'s (drop them from BASES): {stale}"


def test_avx_vnni_runs_complex_products_natively():
    """Alder Lake and later (AVX-VNNI, no AVX-512) get the AVX2 native cgemm / zgemm kernels, not 1m."""
    if ("avx_vnni", "any") not in CONFIGS:
        pytest.skip("this build has no AVX-VNNI kernel (compiler without -mavxvnni)")
    cfg, avx2 = CONFIGS[("avx_vnni", "any")], CONFIGS[("avx2", "any")]
    for op in ("cgemm", "zgemm"):
        assert cfg[op] == avx2[op] != "-"
        assert cfg[op + "_blocks"] == avx2[op + "_blocks"]


# path root -> the float16 type, wrap-around integer kernels and quantized add its configurations run
FAMILIES = {"generic": ("hgemm", "wrap_generic", "qadd_generic"),
            "avx2": ("hgemm_f16c", "wrap_avx2", "qadd_avx2_32bytes"),
            "avx512": ("hgemm_f16c", "wrap_avx2", "qadd_avx512_64bytes"),
            "neon": ("hgemm_neon", "wrap_generic", "qadd_neon_16bytes")}


def _root(key):
    while key in BASES:
        key = BASES[key][0]
    return key[0]


@pytest.mark.parametrize("key", sorted(CONFIGS), ids=lambda k: "-".join(k))
def test_kernel_families_are_config_fields(key):
    """hgemm's converters, the wrap-around integer kernels and the quantized add come from configuration
    fields set by the path's base (not chosen by comparing path names), so each config names all three."""
    cfg = CONFIGS[key]
    assert (cfg["hgemm"], cfg["wrap"], cfg["qadd"]) == FAMILIES[_root(key)], key
