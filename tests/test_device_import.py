"""A device chosen at import, graded: the device checks import the learner's file anew with a GPU pretended, so what
is right on a real machine stays right here (a device cached at import, a demo on the GPU at the bottom of the
file), and a tensor a call uses from the GPU import is named (tests/mistakes/*/*import*.py)."""

from conftest import ROOT, grade_json


def variant_of(solution: str, tmp_path, *replacements: tuple[str, str]):
    """The reference solution `solution` with each (old, new) replaced once, written to a file."""
    code = (ROOT / "solutions" / f"{solution}.py").read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in code, old
        code = code.replace(old, new, 1)
    path = tmp_path / f"{solution}.py"
    path.write_text(code, encoding="utf-8")
    return path


def full(exercise: str, path) -> bool:
    result = grade_json(exercise, "--file", path, "--no-server")
    return result["score"] == result["max_score"], [c["message"] for c in result["checks"] if not c["passed"]]


def test_a_device_cached_at_import_is_decided_where_each_case_imports_the_file(tmp_path):
    cached = "DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
    picked = variant_of("ex16_device_agnostic", tmp_path,
                        ("def pick_device() -> torch.device:", cached + "def pick_device() -> torch.device:"),
                        ('return torch.device("cuda" if torch.cuda.is_available() else "cpu")', "return DEVICE"))
    assert full("ex16", picked) == (True, [])
    pinned = variant_of("ex13_data", tmp_path,
                        ("import torch\n", "import torch\n\nHAS_GPU = torch.cuda.is_available()\n"),
                        ('pin_memory=torch.device(device).type == "cuda"',
                         'pin_memory=HAS_GPU and torch.device(device).type == "cuda"'))
    assert full("ex13", pinned) == (True, [])


def test_a_demo_on_the_gpu_at_import_is_no_mistake_a_tensor_a_call_uses_is(tmp_path):
    demo = ("\n\nDEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
            "print(rms_norm(torch.randn(2, 4, device=DEVICE), torch.ones(4, device=DEVICE)))\n")
    code = (ROOT / "solutions" / "fs07_rmsnorm.py").read_text(encoding="utf-8")
    shown = tmp_path / "demo.py"
    shown.write_text(code + demo, encoding="utf-8")
    assert full("fs07", shown) == (True, [])
    used = tmp_path / "used.py"
    eps = "\n\nEPS = torch.tensor(1e-6, device='cuda' if torch.cuda.is_available() else 'cpu')\n"
    used.write_text(code.replace("+ eps)", "+ EPS)") + eps, encoding="utf-8")
    ok, messages = full("fs07", used)
    assert not ok and "add() with what your file put on cuda at import" in " ".join(messages)
