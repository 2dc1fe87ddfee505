"""The Debian package, as a user gets it: CPack builds stepformer_<version>_amd64.deb from the build
tree, dpkg-deb unpacks it into a scratch root (nothing is installed on the machine), and the
unpacked copy runs from another folder: --version, `info` and `walk` on a shipped model (found in
the package's share/stepformer, not in the checkout), and the explorer's default view under Xvfb
with coloured heatmaps (its shaders found too). The desktop entry, AppStream metadata, man page,
icons and file type are checked where they are installed. The scratch root is removed when every
check passes, kept and named otherwise.

  package_test.py --build BUILD_DIR --version VERSION --xvfb-run XVFB_RUN [--cpack CPACK]
"""
import argparse
import glob
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gui"))
import guitest_common as g  # noqa: E402


def run(t, cmd, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=300, cwd=cwd)
    print(f"$ {' '.join(cmd)}\n-> exit {p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    return p


def check_package(t, root, build, version):
    p = run(t, [t.args.cpack, "-G", "DEB", "-B", os.path.join(root, "deb"), "--config",
                os.path.join(build, "CPackConfig.cmake")])
    if not t.check(p.returncode == 0, "cpack builds the package"):
        return
    debs = glob.glob(os.path.join(root, "deb", "*.deb"))
    name = f"stepformer_{version}_amd64.deb"
    if not t.check([os.path.basename(d) for d in debs] == [name], f"the package is {name} (found {debs})"):
        return
    deb = debs[0]
    depends = run(t, ["dpkg-deb", "-f", deb, "Depends"]).stdout
    for lib in ("libc6", "libstdc++6", "libglfw3", "libsentencepiece0", "fonts-dejavu-core"):
        t.check(lib in depends, f"Depends names {lib} (dpkg-shlibdeps and the fonts)")

    fs = os.path.join(root, "fs")
    if not t.check(run(t, ["dpkg-deb", "-x", deb, fs]).returncode == 0, "dpkg-deb unpacks the package"):
        return
    exe = os.path.join(fs, "usr", "bin", "stepformer")
    # The OpenMP runtime is LLVM's libomp in a GCC build that found it, GCC's libgomp otherwise,
    # none in a build without OpenMP.
    loaded = run(t, ["ldd", exe]).stdout
    for lib, package in (("libomp.so", "libomp5"), ("libgomp.so", "libgomp1")):
        if lib in loaded:
            t.check(package in depends, f"Depends names {package}, the OpenMP runtime the program loads")
    share = os.path.join(fs, "usr", "share")
    elsewhere = os.path.join(root, "elsewhere")  # no assets/ or shaders/ here
    os.makedirs(elsewhere)

    p = run(t, [exe, "--version"], cwd=elsewhere)
    t.check(p.returncode == 0 and p.stdout.strip() == f"stepformer {version}", "--version prints the version")
    model = os.path.join(share, "stepformer", "assets", "models", "reverse-preln.safetensors")
    p = run(t, [exe, "info", "reverse-preln"], cwd=elsewhere)
    t.check(p.returncode == 0 and p.stdout.split("\n")[0] == model,
            "info names a shipped model, found in the package's share/stepformer")
    p = run(t, [exe, "walk", "--model", "assets/models/reverse-preln.safetensors", "--src", "3 1 4"], cwd=elsewhere)
    t.check(p.returncode == 0 and "model: encoder-decoder" in p.stdout and "[decode]" in p.stdout,
            "walk runs the help's example path from another folder")

    # The explorer's default view: the first shipped model, decoded, heatmaps coloured by the shaders.
    t.exe, t.out = exe, elsewhere
    p = t.run(["--screenshot", t.path("default.png")])
    t.check(p.returncode == 0, "the installed explorer exits 0 after its screenshot")
    t.check("not found" not in p.stderr, "the explorer finds its shaders and fonts")
    img, lay = t.shot("default")
    if img:
        t.check(lay.get("model", "").startswith("copy-preln"), f"the default view shows copy-preln (found {lay.get('model')!r})")
        g.check_heatmap(t, img, lay, "attention", "installed")
        x0, y0, x1, y1 = lay["panels"]["attention"]["heatmap"]
        px = img.region(x0 + 1, y0 + 1, x1 - 1, y1 - 1, step=2)
        t.check(any(max(c) - min(c) > 40 for c in px), "the heatmap is in colour (the shaders were found)")

    desktop = os.path.join(share, "applications", "stepformer.desktop")
    metainfo = os.path.join(share, "metainfo", "io.github.stepformer.stepformer.metainfo.xml")
    for tool, path in (("desktop-file-validate", desktop), ("appstreamcli", metainfo)):
        if not shutil.which(tool):
            print(f"note: {tool} missing, {os.path.basename(path)} not validated")
            continue
        cmd = [tool, path] if tool != "appstreamcli" else [tool, "validate", "--no-net", path]
        t.check(run(t, cmd).returncode == 0, f"{tool} accepts {os.path.basename(path)}")
    for size in ("16x16", "48x48", "256x256", "scalable"):
        ext = "svg" if size == "scalable" else "png"
        t.check(os.path.exists(os.path.join(share, "icons", "hicolor", size, "apps", "stepformer." + ext)),
                f"the {size} icon is installed")
    t.check(os.path.exists(os.path.join(share, "mime", "packages", "stepformer.xml")), "the .safetensors type is installed")
    t.check(os.path.exists(os.path.join(share, "doc", "stepformer", "copyright")), "the copyright file is installed")
    man = os.path.join(share, "man", "man1", "stepformer.1.gz")
    if t.check(os.path.exists(man), "the man page is installed"):
        page = gzip.open(man, "rt").read()
        t.check(page.startswith(".TH STEPFORMER 1") and ".SS walk" in page and "\\-\\-model" in page,
                "the man page holds every command's help")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--xvfb-run", required=True)
    ap.add_argument("--cpack", default="cpack")
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="stepformer_package_")  # under $TMPDIR: the run's scratch folder
    t = g.Ctx(argparse.Namespace(exe="", xvfb_run=a.xvfb_run, out=root, case="installed"))
    t.args = a
    try:
        check_package(t, root, os.path.abspath(a.build), a.version)
    finally:
        t.stop_display()
    if t.failures:
        print(f"\n{len(t.failures)} check(s) failed (the unpacked package is kept in {root}):\n  " +
              "\n  ".join(t.failures))
        return 1
    shutil.rmtree(root)
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
