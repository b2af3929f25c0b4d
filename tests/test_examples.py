"""Every file in examples/ prints what TensorFlow prints for the same program.

Each example runs twice in a fresh process: as written (tapeshim) and with its
import line changed to `import tensorflow as tf`. Text must match exactly;
numbers must match to float32 precision.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES_DIR = Path(__file__).parent.parent / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.py"))
NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def _run(source: str, tmp_path: Path, name: str) -> str:
    script = tmp_path / name
    script.write_text(source)
    env = {key: value for key, value in os.environ.items() if key != "KERAS_BACKEND"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    # The copy runs outside examples/: it imports the examples' shared helpers (examples/support/) from there.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(EXAMPLES_DIR), env.get("PYTHONPATH")]))
    if "import tensorflow as tf" in source:
        env["KERAS_BACKEND"] = "tensorflow"  # TF's own Keras; tapeshim chooses JAX itself
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, f"{name} failed:\n{result.stderr}"
    return result.stdout


def _same_output(expected: str, actual: str) -> None:
    assert NUMBER.sub("#", actual) == NUMBER.sub("#", expected), f"text differs:\nTF:\n{expected}\ntapeshim:\n{actual}"
    for e, a in zip(NUMBER.findall(expected), NUMBER.findall(actual)):
        assert float(a) == pytest.approx(float(e), rel=1e-4, abs=1e-5), f"{a} != TF's {e}\n{actual}"


def test_examples_exist():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_prints_what_tensorflow_prints(path, tmp_path):
    source = path.read_text()
    assert "import tapeshim as tf" in source
    actual = _run(source, tmp_path, "with_tapeshim.py")
    expected = _run(source.replace("import tapeshim as tf", "import tensorflow as tf"), tmp_path, "with_tf.py")
    _same_output(expected, actual)


def test_readme_program_prints_what_tensorflow_prints(tmp_path):
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    source = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert "import tapeshim as tf" in source
    actual = _run(source, tmp_path, "readme_tapeshim.py")
    expected = _run(source.replace("import tapeshim as tf", "import tensorflow as tf"), tmp_path, "readme_tf.py")
    _same_output(expected, actual)
