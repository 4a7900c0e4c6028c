#!/usr/bin/env python3
"""Writes cuda_headers.txt: what CUDA's C headers say about everything package cuda binds.

For every function the package binds (the func fields of Driver, NVRTC and CUFFT and the names
given to bind) it records the prototype and, as the C++ compiler sees them, the width and
class of the result and of each argument; for the status enums (CUresult, nvrtcResult,
cufftResult), cufftType and every other enumerator the Go source names, it records the value.
headers_test.go compares the Go bindings and constants with this file, so that a wrong
signature or value fails on any machine instead of crashing on a GPU.

The headers are Debian's nvidia-cuda-dev (CUDA 11.8, non-free; some 2.8 GB installed, so
not in CI):

    apt-get install --no-install-recommends nvidia-cuda-dev
    python3 train/cuda/testdata/cuda_headers.py     # from the repository root; needs g++

CUDA_INCLUDE names another include directory (a toolkit's include/, to check a newer CUDA).
"""

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)  # train/cuda
OUT = os.path.join(HERE, "cuda_headers.txt")
INCLUDE = os.environ.get("CUDA_INCLUDE", "/usr/include")
HEADERS = ["cuda.h", "nvrtc.h", "cufft.h"]
WHOLE_ENUMS = ["CUresult", "nvrtcResult", "cufftResult", "cufftType"]

# Kinds: the class and width the C ABI passes a value with.
KINDS = r"""
#include <cstdio>
#include <type_traits>
template <class T> void kind() {
    if constexpr (std::is_void_v<T>) std::printf(" void");
    else if constexpr (std::is_pointer_v<T>) std::printf(" ptr");
    else if constexpr (std::is_enum_v<T>) std::printf(" e%zu", 8 * sizeof(T));
    else if constexpr (std::is_floating_point_v<T>) std::printf(" f%zu", 8 * sizeof(T));
    else if constexpr (std::is_integral_v<T>) std::printf(" %c%zu", std::is_signed_v<T> ? 'i' : 'u', 8 * sizeof(T));
    else static_assert(sizeof(T) == 0, "an argument that is not a scalar");
}
template <class R, class... A> void sig(const char* name, R (*)(A...)) {
    std::printf("%s", name);
    kind<R>();
    (kind<A>(), ...);
    std::printf("\n");
}
"""


def go_sources():
    for name in sorted(os.listdir(PKG)):
        if name.endswith(".go") and not name.endswith("_test.go"):
            with open(os.path.join(PKG, name)) as f:
                yield f.read()


def bound_functions(srcs):
    """The C functions the Go source binds: func-typed struct fields and names given to bind."""
    names = set()
    for src in srcs:
        names.update(re.findall(r"^\t((?:cu|nvrtc|cufft)\w+)\s+func\(", src, re.M))
        names.update(re.findall(r"\bbind\(h, &\w+\.\w+, \"(\w+)\"\)", src))
        names.update(re.findall(r"\{&\w+\.\w+, \"(\w+)\"\}", src))
    return sorted(names)


def named_enumerators(srcs):
    names = set()
    for src in srcs:
        names.update(re.findall(r"\b((?:CU|CUDA|NVRTC|CUFFT)_[A-Z0-9_]+)\b", src))
    return names


def preprocess():
    src = "".join(f"#include <{h}>\n" for h in HEADERS)
    r = subprocess.run(["g++", "-E", "-P", "-x", "c++", "-I", INCLUDE, "-"], input=src,
                       capture_output=True, text=True, check=True)
    return r.stdout


def prototype(text, name):
    """The declaration of name in the preprocessed text, on one line, or None."""
    m = re.search(r"(?:^|[;{}])\s*([^;{}]*?\b" + name + r"\s*\([^;{}]*\))\s*;", text)
    if not m:
        return None
    decl = re.sub(r"__attribute__\s*\(\(.*?\)\)\s*\)?", "", m.group(1))
    decl = re.sub(r'extern\s+"C"\s*', "", decl)
    return " ".join(decl.split())


def enums(text):
    """Enumerator name -> the typedef name of its enum, for every typedef'd enum."""
    out = {}
    for m in re.finditer(r"typedef\s+enum\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        for item in m.group(1).split(","):
            e = re.match(r"\s*([A-Za-z_]\w*)", item)
            if e:
                out[e.group(1)] = m.group(2)
    return out


def run_cpp(body):
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "h.cpp"), os.path.join(d, "h")
        with open(src, "w") as f:
            f.write("".join(f"#include <{h}>\n" for h in HEADERS) + KINDS + "int main() {\n" + body + "}\n")
        subprocess.run(["g++", "-std=c++17", "-I", INCLUDE, "-o", exe, src], check=True)
        return subprocess.run([exe], capture_output=True, text=True, check=True).stdout.splitlines()


def debian_version():
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "nvidia-cuda-dev"],
                           capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    except OSError:
        return ""


def main():
    srcs = list(go_sources())
    text = preprocess()
    funcs = bound_functions(srcs)
    protos = {n: prototype(text, n) for n in funcs}
    present = [n for n in funcs if protos[n]]

    owner = enums(text)
    wanted = named_enumerators(srcs)
    consts = sorted((owner[n], n) for n in owner if owner[n] in WHOLE_ENUMS or n in wanted)

    body = "".join(f'\tsig("{n}", (decltype(&{n}))nullptr);\n' for n in present)
    body += "".join(f'\tstd::printf("%lld\\n", (long long){n});\n' for _, n in consts)
    body += '\tstd::printf("%d %d\\n", CUDA_VERSION, CUFFT_VERSION);\n'
    lines = run_cpp(body)
    kinds = dict((l.split(" ", 1)[0], l.split(" ", 1)[1]) for l in lines[:len(present)])
    values = lines[len(present):len(present) + len(consts)]
    cuda_version, cufft_version = lines[-1].split()

    deb = debian_version()
    out = [
        "# What CUDA's headers say about the functions and constants package cuda uses.",
        f"# Headers: CUDA_VERSION {cuda_version}, CUFFT_VERSION {cufft_version}"
        + (f" (Debian nvidia-cuda-dev {deb})" if deb and INCLUDE == "/usr/include" else f" ({INCLUDE})") + ".",
        "# Written by cuda_headers.py; do not edit. Read by headers_test.go.",
        "#",
        "# func NAME RESULT ARG...: the class and width of each (ptr, i32, u64, f32, e32 for a",
        "#   32-bit enum, void), then the prototype after '|'.",
        "# absent NAME: a name the Go source binds that these headers do not declare.",
        "# enum TYPE NAME VALUE",
    ]
    for n in funcs:
        if n in kinds:
            out.append(f"func {n} {kinds[n]} | {protos[n]}")
        else:
            out.append(f"absent {n}")
    for (typ, n), v in zip(consts, values):
        out.append(f"enum {typ} {n} {v}")
    with open(OUT, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {OUT}: {len(kinds)} functions, {len(funcs) - len(kinds)} absent, {len(consts)} constants",
          file=sys.stderr)


if __name__ == "__main__":
    main()
