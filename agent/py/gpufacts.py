# gpufacts.py - what one interpreter's workers would use of Triton and
# NCCL, reported for the agent's gpufacts op (agent/op_gpufacts.h).
# Compiled into envctl-agent at build time and run as `INTERP -c THIS
# ARCH` after site initialisation, so os.environ is what sitecustomize
# left, as a worker sees it.  ARCH is the GPU architecture as Triton
# counts it (120 for compute capability 12.0), or '' when unknown.
#
# It imports neither triton nor torch and runs nothing: it finds their
# packages with importlib.util.find_spec() (which executes no package
# code for a top-level name), reads Triton's version from its
# distribution metadata and its ptxas rule from its own source text, and
# names the files; the agent runs `ptxas --version` and reads libnccl's
# bytes itself, under its privilege rules.
#
# Triton's lookup (third_party/nvidia/backend/compiler.py get_ptxas(),
# python/triton/knobs.py env_nvidia_tool): since 3.6, arch >= 100 uses
# the tool 'ptxas-blackwell' and the variable TRITON_PTXAS_BLACKWELL_PATH
# (triton-lang/triton#8959), else 'ptxas' and TRITON_PTXAS_PATH; the
# variable's path is tried first, then the bundled
# triton/backends/nvidia/bin/TOOL, and the first whose `--version` says
# "release X.Y" wins (a failing one is passed over without a word).
#
# The report follows the marker line, as ASCII JSON.
import sys, os


def _envctl_gpufacts():
    import importlib.util
    import json

    def t(s):
        if s is None:
            return None
        return str(s).encode('utf-8', 'surrogateescape').decode(
            'utf-8', 'replace')

    def spec_dir(name):
        try:
            s = importlib.util.find_spec(name)
        except Exception:
            return None
        locs = list(getattr(s, 'submodule_search_locations', None) or [])
        return locs[0] if locs else None

    def dist_version(name):
        try:
            import importlib.metadata as md
            return md.version(name)
        except Exception:
            pass
        want = name.replace('-', '_').lower()
        for d in sys.path:
            try:
                entries = sorted(os.listdir(d or '.'))
            except OSError:
                continue
            for e in entries:
                if (e.lower().startswith(want + '-') and
                        e.endswith('.dist-info')):
                    try:
                        with open(os.path.join(d, e, 'METADATA')) as f:
                            for line in f:
                                if line.startswith('Version:'):
                                    return line.split(':', 1)[1].strip()
                    except OSError:
                        pass
        return None

    def read(path, cap=1 << 20):
        try:
            with open(path, 'rb') as f:
                return f.read(cap).decode('utf-8', 'replace')
        except OSError:
            return None

    arch = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] else None

    triton = None
    tdir = spec_dir('triton')
    tver = dist_version('triton')
    if tdir is not None or tver is not None:
        src = ''
        if tdir is not None:
            src = read(os.path.join(tdir, 'backends', 'nvidia',
                                    'compiler.py')) or ''
        blackwell = 'ptxas_blackwell' in src
        thor = 'ptxas_thor' in src
        tool = 'ptxas'
        if arch is not None and arch >= 100 and blackwell:
            tool = 'ptxas-blackwell'
        if arch == 110 and thor:
            tool = 'ptxas-thor'
        var = 'TRITON_' + tool.upper().replace('-', '_') + '_PATH'
        bundled = None
        if tdir is not None:
            bundled = os.path.join(tdir, 'backends', 'nvidia', 'bin', tool)
        triton = {'version': t(tver), 'dir': t(tdir),
                  'split': blackwell, 'tool': tool, 'variable': var,
                  'value': t(os.environ.get(var)), 'bundled': t(bundled),
                  'arch': arch}

    nccl = None
    tdir = spec_dir('torch')
    dirs = []
    if tdir is not None:
        dirs.append((os.path.dirname(tdir), 'beside torch'))
    dirs.extend((d, 'sys.path') for d in sys.path if d)
    for d, how in dirs:
        lib = os.path.join(d, 'nvidia', 'nccl', 'lib', 'libnccl.so.2')
        if not os.path.isfile(lib):
            continue
        wheel = None
        try:
            for e in sorted(os.listdir(d)):
                if e.startswith('nvidia_nccl') and e.endswith('.dist-info'):
                    wheel = e[:-len('.dist-info')]
        except OSError:
            pass
        nccl = {'path': t(lib), 'how': how, 'wheel': t(wheel),
                'torch': t(tdir)}
        break

    r = {'executable': t(sys.executable),
         'python': sys.version.split()[0],
         'cuda_home': t(os.environ.get('CUDA_HOME')),
         'triton': triton, 'nccl': nccl}
    for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            f.flush()
        except Exception:
            pass
    b = ('\n--envctl-gpufacts-v1--\n' + json.dumps(r) + '\n').encode('ascii')
    while b:
        b = b[os.write(1, b):]
    os._exit(0)


_envctl_gpufacts()
