#!/usr/bin/env python3
"""fuzz-corpus.py GPURC OUTDIR: seed corpora and dictionaries of the libFuzzer
targets (docs/fuzzing.md), made from examples/ and tests/ on every build
instead of being committed: OUTDIR/<target>/ holds the seeds,
OUTDIR/dict/<target>.dict the dictionary of a text syntax (the words and
punctuation of the example sources). GPURC assembles the example sources."""
import hashlib
import json
import pathlib
import re
import subprocess
import sys
import tempfile

root = pathlib.Path(__file__).resolve().parent.parent
gpurc, out = sys.argv[1], pathlib.Path(sys.argv[2])
(out / "dict").mkdir(parents=True, exist_ok=True)


def seed(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def assemble(isa, src):
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        r = subprocess.run([gpurc, "asm", "--isa", isa, "-o", f.name, str(src)], capture_output=True)
        return pathlib.Path(f.name).read_bytes() if r.returncode == 0 else None


def dictionary(target, texts):
    words = set()
    for t in texts:
        words.update(re.findall(r"[A-Za-z_.$%@][A-Za-z0-9_.]*", t))
        words.update(re.findall(r"[^\sA-Za-z0-9]{1,2}", t))
    lines = []
    for w in sorted(words):
        b = w.encode()
        if 0 < len(b) <= 32:
            lines.append('"' + "".join("\\x%02x" % c if c in b'"\\' or not 0x20 <= c < 0x7f else chr(c) for c in b) + '"')
    (out / "dict" / (target + ".dict")).write_text("\n".join(lines) + "\n")


# Guest sources and what they assemble to: (isa, asm target, disasm/diff targets, sources)
syntaxes = [
    ("pica200", "asm_picasso", sorted((root / "examples/pica200").glob("*.pica"))),
    ("tesla", "asm_envyas", sorted((root / "examples/tesla").glob("*.asm"))),
    ("g13", "asm_applegpu", sorted((root / "examples/g13").glob("*.s"))),
]
for isa, asm_target, sources in syntaxes:
    texts = [s.read_text() for s in sources]
    for t in texts:
        seed(asm_target, b"\0" + t.encode())
    dictionary(asm_target, texts)
    for s in sources:
        code = assemble(isa, s)
        if code is None:
            continue
        seed("disasm_" + isa, b"\0" + code)
        seed("diff_" + isa, bytes([31, 0]) + code)
        if isa == "pica200":
            seed("shbin", code)

# Bifrost: the Mesa clauses of the codec tests (hex and text).
inc = (root / "tests/bifrost/mesa_expected.inc").read_text()
bifrost_texts = []
for hexs, text in re.findall(r'\{"[^"]*", "([0-9a-f]+)",\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}', inc):
    code = bytes.fromhex(hexs)
    seed("disasm_bifrost", b"\0" + code)
    seed("diff_bifrost", bytes([3, 0]) + code)
    t = "".join(json.loads(p) for p in re.findall(r'"(?:[^"\\]|\\.)*"', text))
    bifrost_texts.append(t)
    seed("asm_bifrost", b"\0" + t.encode())
dictionary("asm_bifrost", bifrost_texts)

for cubin in sorted((root / "examples/tesla").glob("*.cubin")):
    seed("cubin", cubin.read_bytes())
    seed("disasm_tesla", b"\0" + cubin.read_bytes())
dictionary("cubin", [c.read_text(errors="replace") for c in (root / "examples/tesla").glob("*.cubin")])

# IR text: the examples and the programs of the regression files.
ir_texts = [p.read_text() for p in sorted((root / "examples/ir").glob("*.ir"))]
# Replay documents: the examples with their asm_file inlined, the regressions.
docs = []
for p in sorted((root / "examples").rglob("*.json")) + sorted((root / "tests/regressions").glob("*.json")):
    try:
        doc = json.loads(p.read_text())
    except ValueError:
        continue
    prog = doc.get("program", {})
    if isinstance(prog, dict) and "asm_file" in prog:
        f = p.parent / prog.pop("asm_file")
        if f.exists():
            prog["asm"] = f.read_text()
    if isinstance(prog, dict) and doc.get("isa") == "ir" and isinstance(prog.get("asm"), str):
        ir_texts.append(prog["asm"])
    docs.append(json.dumps(doc))
for t in ir_texts:
    seed("ir_parse", t)
dictionary("ir_parse", ir_texts)
for d in docs:
    seed("replay_json", d)
dictionary("replay_json", docs)

# Former findings (tests/regressions/libfuzzer/<target>/): every run starts
# with them, so a finding that comes back fails the smoke run.
for d in sorted((root / "tests/regressions/libfuzzer").glob("*")):
    for f in sorted(d.iterdir()):
        seed(d.name, f.read_bytes())
