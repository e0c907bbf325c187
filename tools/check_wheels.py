"""Build the wheels, install each into a bare virtual environment, and import every public module.

`python tools/check_wheels.py` (`make check-wheels`) builds the wheel of every package under
`packages/`, then for each package makes a new virtual environment holding nothing but that wheel and its
declared dependencies (no dev tools, no source tree on `sys.path`), and imports each public module of the
installed package: every module whose dotted path has no `_`-prefixed part. It installs the package
without extras first, then adds its extras one at a time. A module that cannot be imported without an
extra (its import fails on a missing distribution that only an extra requires) is skipped until that
extra is installed; any other failure, and any warning, fails the check. So does a dependency that the
code imports but the wheel does not declare, as long as nothing declared happens to bring it in.

Installs go through pip with its usual cache, so a second run downloads nothing.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import tempfile
import time
import venv
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# One requirement line of a wheel's metadata: the distribution's name, and the extra it belongs to if any.
_REQUIREMENT = re.compile(r'^\s*([A-Za-z0-9][A-Za-z0-9._-]*)')
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


def _normalise(name: str) -> str:
    return re.sub(r'[-_.]+', '_', name).lower()


def _run(log: list[str], what: str, *args: str | Path) -> int:
    """Run a command, adding its output and `what` it did, with its duration, to `log`; its exit status."""
    start = time.monotonic()
    done = subprocess.run([str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.stdout.strip():
        log.append(done.stdout.rstrip('\n'))
    log.append(f'  {what}: {time.monotonic() - start:.1f} s')
    return done.returncode


def wheel_metadata(wheel: Path) -> tuple[str, list[str], dict[str, list[str]]]:
    """A wheel's distribution name, its outermost regular packages (`edgewise.graph`: `edgewise` is a
    namespace), and its extras with the distributions each adds."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith('.dist-info/METADATA'))).decode()
    inits = {tuple(n.split('/')[:-1]) for n in names if n.endswith('/__init__.py')}
    packages = sorted('.'.join(p) for p in inits if not any(p[:i] in inits for i in range(1, len(p))))
    name = next(line.split(':', 1)[1].strip() for line in metadata.splitlines() if line.startswith('Name:'))
    extras: dict[str, list[str]] = {
        line.split(':', 1)[1].strip(): [] for line in metadata.splitlines() if line.startswith('Provides-Extra:')
    }
    for line in metadata.splitlines():
        if line.startswith('Requires-Dist:'):
            requirement = line.split(':', 1)[1]
            extra = _EXTRA_MARKER.search(requirement)
            dist = _REQUIREMENT.match(requirement)
            if extra and dist:
                extras.setdefault(extra.group(1), []).append(dist.group(1))
    return name, packages, extras


def import_public_modules(package: str, missing_ok: list[str]) -> int:
    """Import every public module of an installed package (run inside the bare environment).

    Args:
        package: the dotted name of the package, e.g. `edgewise.graph`.
        missing_ok: the distributions of the extras that are not installed: a module whose import fails
            because one of them is missing is skipped.

    Returns:
        The exit status: 0 when every module imported or was skipped for a missing extra.
    """
    import warnings

    warnings.simplefilter('error')
    top = importlib.import_module(package)
    allowed = {_normalise(name) for name in missing_ok}
    names = [package]
    for path in top.__path__:
        for file in sorted(Path(path).rglob('*.py')):
            parts = file.relative_to(path).with_suffix('').parts
            if parts[-1] == '__init__':
                parts = parts[:-1]
            if parts and not any(part.startswith('_') for part in parts):
                names.append('.'.join([package, *parts]))
    failures = 0
    for name in names:
        # A public module inside a private package is not public either.
        if any(part.startswith('_') for part in name.split('.')):
            continue
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and _normalise(e.name.split('.')[0]) in allowed:
                print(f'  skipped {name}: needs {e.name} (an extra that is not installed)')
                continue
            print(f'  FAILED  {name}: {e!r}')
            failures += 1
            continue
        except Exception as e:
            print(f'  FAILED  {name}: {e!r}')
            failures += 1
            continue
        if not str(module.__file__).startswith(sys.prefix):
            print(f'  FAILED  {name}: imported from {module.__file__}, not from the installed wheel')
            failures += 1
            continue
        print(f'  ok      {name}')
    return 1 if failures else 0


def check_package(wheel: Path, work: Path) -> tuple[bool, str]:
    """Install one wheel into a new bare environment, then with each extra, importing its public modules.

    Returns:
        Whether every public module imported, and what was done and printed meanwhile.
    """
    name, packages, extras = wheel_metadata(wheel)
    assert packages, f'{wheel.name} holds no package'
    env = work / f'venv-{_normalise(name)}'
    # No pip inside: the pip running this script installs into it (`pip --python`), which is quicker.
    venv.create(env, with_pip=False)
    python = env / 'bin' / 'python'
    # Our other wheels stand in for the packages of the workspace that it depends on (not on any registry).
    links = ('--find-links', str(wheel.parent))
    ok = True
    log: list[str] = []
    installed: list[str] = []
    for extra in [None, *sorted(extras)]:
        if extra is not None:
            installed.append(extra)
        spec = f'{wheel}[{",".join(installed)}]' if installed else str(wheel)
        log.append(f'{name}{"[" + ",".join(installed) + "]" if installed else ""}:')
        if _run(log, 'installed', sys.executable, '-m', 'pip', '--python', python, 'install', '--quiet', *links, spec):
            return False, '\n'.join(log)
        missing_ok = [dist for e, dists in extras.items() if e not in installed for dist in dists]
        for package in packages:
            status = _run(
                log, 'imported', python, '-I', '-W', 'error', __file__, 'import', package, json.dumps(missing_ok)
            )
            ok = ok and status == 0
    return ok, '\n'.join(log)


def main() -> int:
    """Build the wheels and check each (or, with `import`, import the public modules of one package)."""
    if len(sys.argv) > 1 and sys.argv[1] == 'import':
        return import_public_modules(sys.argv[2], json.loads(sys.argv[3]))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='edgewise-wheels-') as tmp:
        work = Path(tmp)
        dist = work / 'dist'
        sources = sorted(p.parent for p in (ROOT / 'packages').glob('*/pyproject.toml'))
        log: list[str] = []
        # Built by the hatchling pinned in the dev group (no isolated build environment to set up each time).
        pip_wheel = ('-m', 'pip', 'wheel', '--quiet', '--no-deps', '--no-build-isolation', '--wheel-dir', dist)
        status = _run(log, 'built', sys.executable, *pip_wheel, *sources)
        print('\n'.join(log))
        if status:
            return status
        wheels = sorted(dist.glob('*.whl'))
        print('built', ', '.join(w.name for w in wheels))
        # The packages are checked side by side (pip mostly waits on the network), each in its own
        # environment, and every one to the end, so that one run reports every failure.
        with ThreadPoolExecutor(max_workers=len(wheels)) as pool:
            results = list(pool.map(check_package, wheels, [work] * len(wheels)))
        for _, log_text in results:
            print(log_text)
        ok = all(ok for ok, _ in results)
    print(f'wheel check {"passed" if ok else "FAILED"} in {time.monotonic() - start:.0f} s')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
