"""ssad works without its optional libraries: with SciPy made unimportable, the package
imports, differentiates NumPy code, and lists its rules without SciPy's."""

import subprocess
import sys
import textwrap

WITHOUT_SCIPY = textwrap.dedent(
    """
    import sys
    sys.modules["scipy"] = None  # `import scipy` now raises ImportError
    import numpy as np
    import ssad
    from ssad.rules.catalog import catalog

    def f(x):
        return np.sum(np.sin(x) * x)

    x = np.array([0.3, -1.2])
    print(np.allclose(ssad.grad(f)(x), np.cos(x) * x + np.sin(x)))
    print(any(title.startswith("scipy") for title in catalog()))
    print(not any(name.startswith("scipy") for name in sys.modules if sys.modules[name] is not None))
    """
)


def test_ssad_works_without_scipy(tmp_path):
    script = tmp_path / "without_scipy.py"
    script.write_text(WITHOUT_SCIPY)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False", "True"]
