"""The runner's cold code: _COLD_CODE, text compiled one section at a time when a
run needs it (a script gets no bytecode cache, and parsing is most of the
runner's own cost).

The block is code like the rest of the file, so it is held to the same checks:
each section is linted together with the code above it (as it runs), compiles
on Python 3.8, and reports this file's real line numbers. A plain run must not
compile any of it."""

import ast
import importlib.util
import io
import re
import subprocess
import sys

import pytest
from pyflakes.api import check
from pyflakes.reporter import Reporter


OPENING = "_COLD_CODE = r'''"
MARKER = re.compile(r"^# ==== (\w+):", re.M)


def split_runner(text):
    """(text before the block's opening, the block, text after its closing)."""
    start = text.index(OPENING)
    end = text.index("'''", start + len(OPENING))
    return text[:start], text[start + len(OPENING):end], text[end + 3:]


def section_names(block):
    return MARKER.findall(block)


def as_code(text, keep):
    """The runner's text with the sections in ``keep`` of _COLD_CODE turned into
    plain code on their own lines and the others blanked, every line where it
    was: what Python runs once those sections are compiled."""
    before, block, after = split_runner(text)
    lines = []
    current = None
    for line in block.split("\n"):
        found = MARKER.match(line)
        if found:
            current = found.group(1)
        lines.append(line if current in keep else "")
    return before + "_COLD_CODE = ''" + "\n".join(lines) + after


def load_runner(path, name):
    """The runner imported as a module (not run): its functions, uncalled."""
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def runner_text(runner_source):
    return runner_source.read_text(encoding="utf-8")


def test_the_block_has_the_sections_the_code_asks_for(runner_text):
    _, block, _ = split_runner(runner_text)
    names = section_names(block)
    assert len(names) == len(set(names)) >= 3, names
    asked = set(re.findall(r'_cold\("(\w+)"\)', runner_text))
    assert asked and asked <= set(names), (asked, names)
    assert block.lstrip("\n").startswith("# ==== "), "code before the first section would never be compiled"


@pytest.mark.parametrize("keep", ["each", "all"])
def test_cold_code_lints_clean_with_the_code_it_runs_beside(runner_text, keep):
    """pyflakes on the file as each section runs: alone on top of the hot code
    (so a call into another section that skips _cold() is an undefined name),
    and all together (a name defined twice is caught)."""
    _, block, _ = split_runner(runner_text)
    names = section_names(block)
    for sections in ([[name] for name in names] if keep == "each" else [names]):
        out = io.StringIO()
        warnings = check(as_code(runner_text, set(sections)), "run_verifier.py", Reporter(out, out))
        assert warnings == 0, "sections %s:\n%s" % (sections, out.getvalue())


def test_linting_catches_a_mistake_in_the_block(runner_text):
    """The lint above bites: an undefined name planted in a section is reported."""
    _, block, _ = split_runner(runner_text)
    name = section_names(block)[0]
    broken = runner_text.replace("# ==== %s:" % name, "# ==== %s:\nsurely_undefined_name()\n#" % name, 1)
    out = io.StringIO()
    assert check(as_code(broken, {name}), "run_verifier.py", Reporter(out, out)) >= 1
    assert "surely_undefined_name" in out.getvalue()


def test_each_section_reports_its_real_file_and_lines(runner_source, runner_text):
    module = load_runner(runner_source, "runner_cold_lines")
    try:
        lines = runner_text.splitlines()
        _, block, _ = split_runner(runner_text)
        for section in section_names(block):
            assert section not in module._compiled_sections
            module._cold(section)
            body = block.split("# ==== %s:" % section, 1)[1].split("\n# ==== ", 1)[0]
            functions = re.findall(r"^def (\w+)\(", body, re.M)
            assert functions, section
            for name in functions:
                code = getattr(module, name).__code__
                assert code.co_filename == str(runner_source)
                assert lines[code.co_firstlineno - 1].startswith("def %s(" % name), (section, name)
    finally:
        sys.modules.pop("runner_cold_lines", None)


def test_cold_code_is_python_38_syntax(runner_text):
    _, block, _ = split_runner(runner_text)
    ast.parse(block, feature_version=(3, 8))
    ast.parse(runner_text, feature_version=(3, 8))


def test_every_section_compiles_on_python_38(runner_source, python38):
    probe = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('probe', sys.argv[1])\n"
        "module = importlib.util.module_from_spec(spec); sys.modules['probe'] = module\n"
        "spec.loader.exec_module(module)\n"
        "import re\n"
        "for name in re.findall(r'^# ==== (\\w+):', module._COLD_CODE, re.M):\n"
        "    module._cold(name)\n"
        "print(sorted(module._compiled_sections))\n"
    )
    done = subprocess.run([python38, "-I", "-c", probe, str(runner_source)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "'report'" in done.stdout and "'failure'" in done.stdout


WHAT_WAS_COMPILED = """
    import functools, json, sys

    def plain(workspace):
        runner = sys.modules['__main__']
        print(json.dumps(sorted(runner._compiled_sections)))
        return 1.0

    @functools.wraps(plain)
    def decorated(*args, **kwargs):
        return plain(*args, **kwargs)

    verify = %s
"""


@pytest.mark.parametrize("verify, flags, compiled", [
    ("plain", [], []),
    ("plain", ["--stack-signal", "USR1"], ["stacks"]),
    ("plain", ["--explain-to", "explain.json"], ["report"]),
    ("plain", ["--phases-to", "phases.jsonl"], ["phases"]),
    ("plain", ["--explain-to", "explain.json", "--phases-to", "phases.jsonl"], ["phases", "report"]),
    ("decorated", [], ["signature"]),
], ids=["plain-run", "stack-signal", "explain-to", "phases-to", "both-reports", "decorated-verify"])
def test_a_passing_run_compiles_only_what_it_uses(sandbox, verify, flags, compiled):
    """A plain run compiles none of the cold code; --explain-to and --phases-to
    compile their own section alone (not the failure code), and so does
    --stack-signal."""
    sandbox.verifier(WHAT_WAS_COMPILED % verify)
    result = sandbox.run(*flags)
    assert result.returncode == 0, result.describe()
    assert result.stdout_json() == compiled
    assert result.rewards == {"reward.txt": "1.0"}


def test_a_plain_run_imports_no_json(any_sandbox):
    any_sandbox.verifier("""
        import sys

        def verify(workspace):
            return 0.0 if "json" in sys.modules else 1.0
    """)
    for flags in ([], ["--stack-signal", "USR1"]):
        result = any_sandbox.run(*flags)
        assert result.returncode == 0, result.describe()
        assert result.reward_txt == "1.0", flags
