"""Build the one-folder bundle dist/koroku/ and the release archive next to it.

    uv run --group packaging python packaging/build.py

runs PyInstaller on packaging/koroku.spec, then packs dist/koroku/ into
dist/koroku-<version>-linux-<arch>.tar.gz and prints both sizes. Check the result with
`uv run python packaging/smoke_check.py`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "packaging" / "koroku.spec"
DIST = ROOT / "dist"
WORK = ROOT / "build" / "pyinstaller"


def version() -> str:
    """The package version, read from koroku_desktop/__init__.py without importing it."""
    text = (ROOT / "koroku_desktop" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if match is None:
        raise SystemExit("no __version__ in koroku_desktop/__init__.py")
    return match.group(1)


def archive_name() -> str:
    """The release archive's file name, e.g. koroku-0.1.0-linux-x86_64.tar.gz."""
    system = platform.system().lower()
    return f"koroku-{version()}-{system}-{platform.machine()}.tar.gz"


def du(path: Path) -> int:
    """Bytes on disk under `path` (apparent sizes, symlinks not followed)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink())


def mib(size: int) -> str:
    """A size in MiB for the summary."""
    return f"{size / 2**20:.1f} MiB"


def run_pyinstaller(log_level: str) -> None:
    """Run PyInstaller on the spec into dist/ (a clean build)."""
    if importlib.util.find_spec("PyInstaller") is None:
        raise SystemExit(
            "PyInstaller is not installed: run `uv run --group packaging python packaging/build.py`"
        )
    command = [
        sys.executable, "-m", "PyInstaller", str(SPEC),
        "--noconfirm", "--clean",
        "--distpath", str(DIST), "--workpath", str(WORK),
        "--log-level", log_level,
    ]  # fmt: skip
    env = dict(os.environ, PYTHONHASHSEED="0")
    subprocess.run(command, cwd=ROOT, env=env, check=True)


def make_archive(folder: Path, target: Path) -> None:
    """Pack `folder` as `<folder name>/...` into a .tar.gz."""
    tmp = target.with_suffix(".tmp")
    with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
        tar.add(folder, arcname=folder.name)
    os.replace(tmp, target)


def restore_vendored_libs(bundle: Path) -> int:
    """Put back the unstripped copies of the libraries wheels vendor in `<package>.libs/`.

    The spec strips debug symbols (libpython alone shrinks from 23 to 5 MiB), but `strip`
    breaks these auditwheel-patched libraries: numpy's OpenBLAS then fails to load with "ELF
    load command address/offset not page-aligned". Returns how many files were restored.
    """
    site = Path(sysconfig.get_paths()["purelib"])
    internal = bundle / "_internal"
    restored = 0
    for libs in sorted(site.glob("*.libs")):
        for lib in sorted(libs.iterdir()):
            for target in (internal / libs.name / lib.name, internal / lib.name):
                if target.is_file():
                    shutil.copy2(lib, target)
                    restored += 1
    return restored


def main(argv: list[str] | None = None) -> int:
    """Build, pack, and print a summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log-level", default="WARN", help="PyInstaller's (default WARN)")
    parser.add_argument("--no-archive", action="store_true", help="skip the .tar.gz")
    args = parser.parse_args(argv)
    if platform.system() != "Linux":
        print("warning: the bundle is only built and tested on Linux", file=sys.stderr)
    started = time.monotonic()
    bundle = DIST / "koroku"
    if bundle.exists():
        shutil.rmtree(bundle)
    run_pyinstaller(args.log_level)
    binary = bundle / "koroku"
    if not binary.is_file():
        raise SystemExit(f"PyInstaller did not produce {binary}")
    restored = restore_vendored_libs(bundle)
    print(f"built  {binary.relative_to(ROOT)}  ({mib(du(bundle))} in {bundle.name}/)")
    print(f"kept   {restored} vendored wheel libraries unstripped")
    if not args.no_archive:
        archive = DIST / archive_name()
        make_archive(bundle, archive)
        print(f"packed {archive.relative_to(ROOT)}  ({mib(du(archive))})")
    print(f"done in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
