"""ssad works without its optional libraries: with SciPy made unimportable, the package
imports, differentiates NumPy code, and lists its rules without SciPy's; with Numba
made unimportable, `compile=True` runs the NumPy code after one warning saying how to
install Numba, and `compile="strict"` raises."""

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


def _printed(tmp_path, source):
    """What `source`, run as a script in a new interpreter, prints, split into words."""
    script = tmp_path / "without.py"
    script.write_text(source)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_ssad_works_without_scipy(tmp_path):
    assert _printed(tmp_path, WITHOUT_SCIPY) == ["True", "False", "True"]


WITHOUT_NUMBA = textwrap.dedent(
    """
    import sys, warnings
    sys.modules["numba"] = None
    import numpy as np
    import ssad

    def f(x):
        return np.sum(np.sin(x) * x)

    x = np.array([0.3, -1.2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        print(np.allclose(ssad.grad(f, compile=True)(x), np.cos(x) * x + np.sin(x)))
    print([str(w.message).count("pip install 'ssad[numba]'") for w in caught])
    try:
        ssad.grad(f, compile="strict")(x)
    except ssad.SsadError as error:
        print("numba" in str(error))
    """
)


def test_ssad_works_without_numba(tmp_path):
    assert _printed(tmp_path, WITHOUT_NUMBA) == ["True", "[1]", "True"]
