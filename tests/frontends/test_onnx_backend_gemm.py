"""ONNX's own backend node tests of Gemm (test_gemm_*) run through onnx.reference.ReferenceEvaluator with gemmkit's Gemm
as the op (new_ops=[gemmkit.onnx.Gemm]), compared with ONNX's expected outputs as ONNX's backend runner compares them.

Where the cases come from (all from the installed onnx package, nothing of ONNX's copied here):
- the stored node test data, onnx/backend/test/data/node/test_gemm_*/ (model.onnx, test_data_set_*/input_*.pb and
  output_*.pb), where the installed onnx has it: onnx's source tree and older wheels do, recent wheels leave
  onnx/backend/test/data/node out (that test then skips, saying so);
- the generated cases, onnx.backend.test.case.node.gemm: the export functions that produced that stored data
  (each seeded as ONNX seeds it), run at import; they always run here, also written to a temporary folder in
  the stored data's layout and read back through the same loader.
Tolerance: onnx.backend.test.runner.Runner.assert_similar_outputs (rtol 1e-3, atol 1e-7 from each case, equal
dtypes and shapes), and exact equality for integer outputs. ONNX Runtime as an oracle of gemmkit.onnx is in
tests/frontends/test_onnx_gemm.py.
"""
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from gemmkit import onnx as gk_onnx  # noqa: E402

try:
    from onnx.backend.test.runner import Runner
    from onnx.backend.test.case import node as node_cases
    from onnx.backend.test.case.node import gemm as _gemm_exports  # importing it records its cases
except ImportError as e:  # an onnx without its backend test package
    pytest.skip(f"onnx.backend.test is not importable here: {e}", allow_module_level=True)

RTOL, ATOL = 1e-3, 1e-7  # onnx's node test cases' (TestCase.rtol / atol)
NODE_DATA = Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "node"
STORED = sorted(NODE_DATA.glob("test_gemm_*")) if NODE_DATA.is_dir() else []
GENERATED = [case for case in node_cases._NodeTestCases if case.name.startswith("test_gemm_")]


def _index(path):
    return int(path.stem.rsplit("_", 1)[1])


def _tensors(folder, kind):
    """The arrays of folder/<kind>_<i>.pb, in the order of i."""
    out = []
    for path in sorted(folder.glob(f"{kind}_*.pb"), key=_index):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        out.append(numpy_helper.to_array(tensor))
    return out


def load_stored_case(case_dir):
    """(model, [(inputs, outputs), ...]) of one case folder in ONNX's node test data layout."""
    model = onnx.load(str(case_dir / "model.onnx"))
    data_sets = [(_tensors(d, "input"), _tensors(d, "output"))
                 for d in sorted(case_dir.glob("test_data_set_*"), key=_index)]
    return model, data_sets


def save_case(case, folder):
    """A generated case written as ONNX's stored node test data is laid out (model.onnx, test_data_set_i/)."""
    folder.mkdir(parents=True)
    onnx.save(case.model, str(folder / "model.onnx"))
    for i, (inputs, outputs) in enumerate(case.data_sets):
        data = folder / f"test_data_set_{i}"
        data.mkdir()
        for kind, arrays, infos in (("input", inputs, case.model.graph.input),
                                    ("output", outputs, case.model.graph.output)):
            for j, (array, info) in enumerate(zip(arrays, infos)):
                (data / f"{kind}_{j}.pb").write_bytes(numpy_helper.from_array(array, info.name).SerializeToString())


def run_on_gemmkit(model, data_sets, rtol=RTOL, atol=ATOL):
    sess = ReferenceEvaluator(model, new_ops=[gk_onnx.Gemm])
    assert [type(n) for n in sess.rt_nodes_] == [gk_onnx.Gemm], "the model's Gemm node is not gemmkit's op"
    names = [i.name for i in model.graph.input]
    for inputs, expected in data_sets:
        got = sess.run(None, dict(zip(names, inputs)))
        Runner.assert_similar_outputs(expected, got, rtol=rtol, atol=atol)
        for g, e in zip(got, expected):
            if np.issubdtype(e.dtype, np.integer):
                np.testing.assert_array_equal(g, e)


@pytest.mark.skipif(not STORED, reason=f"onnx {onnx.__version__} as installed has no node test data "
                                       f"({NODE_DATA} is absent or holds no test_gemm_*): the generated cases run instead")
@pytest.mark.parametrize("case_dir", STORED, ids=[p.name for p in STORED])
def test_stored_node_case(case_dir):
    run_on_gemmkit(*load_stored_case(case_dir))


@pytest.mark.skipif(not GENERATED, reason="onnx.backend.test.case.node.gemm recorded no cases "
                                          "(imported earlier while another op was targeted)")
@pytest.mark.parametrize("case", GENERATED, ids=[c.name for c in GENERATED])
def test_generated_node_case(case):
    run_on_gemmkit(case.model, case.data_sets, case.rtol, case.atol)


@pytest.mark.skipif(not GENERATED, reason="no generated cases to write")
def test_generated_cases_through_the_stored_data_loader(tmp_path):
    """The loader of the stored data, on the generated cases written in that layout (where the installed onnx
    has no stored data, the loader is checked this way)."""
    for case in GENERATED:
        save_case(case, tmp_path / case.name)
        model, data_sets = load_stored_case(tmp_path / case.name)
        assert len(data_sets) == len(case.data_sets) and len(data_sets[0][0]) == len(case.model.graph.input)
        run_on_gemmkit(model, data_sets, case.rtol, case.atol)


def test_the_cases_cover_onnx_gemm_exports():
    """Every export function of onnx's Gemm case module gave a case (the list is onnx's, not one kept here)."""
    exports = [name for name in vars(_gemm_exports.Gemm) if name.startswith("export")]
    assert len(GENERATED) == len(exports) >= 10
    names = {c.name for c in GENERATED}
    assert {"test_gemm_all_attributes", "test_gemm_transposeA", "test_gemm_default_no_bias"} <= names
