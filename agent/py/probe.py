# probe.py - what an interpreter's start-up did, reported by the agent's
# probe (agent/probe.h).  Compiled into envctl-agent at build time and run
# with `INTERP -c THIS NAME...` after site initialisation, so sitecustomize
# already ran or failed; the variable names arrive as sys.argv[1:], never
# pasted into the code.
#
# Run as `INTERP -S -c THIS =locate` (a name with '=' is no variable),
# it reports instead where start-up would import sitecustomize from,
# without running site, its .pth files or sitecustomize: the way to a
# host whose start-up exits, hangs or kills its parent.
#
# It writes JSON by hand and asks sys.meta_path for the module's spec
# itself, as importlib.util.find_spec would: importing json, or
# importlib.util (contextlib, collections, functools), would add half of a
# bare interpreter's start-up to every probe.  Strings are made valid
# UTF-8 first (surrogate escapes become U+FFFD), then escaped to ASCII.
# The report goes straight to fd 1 after the flushes; os._exit() then
# skips atexit handlers and the non-daemon threads a sitecustomize may
# have started.  The marker line must match ENVCTL_PROBE_MARKER.
import sys, os
def _envctl_probe():
    import site
    def q(s):
        if s is None:
            return 'null'
        s = str(s).encode('utf-8', 'surrogateescape').decode('utf-8', 'replace')
        o = []
        for c in s:
            n = ord(c)
            if 32 <= n < 127 and c != '"' and c != '\\':
                o.append(c)
            elif n < 0x10000:
                o.append('\\u%04x' % n)
            else:
                n -= 0x10000
                o.append('\\u%04x\\u%04x' % (0xd800 + (n >> 10),
                                             0xdc00 + (n & 0x3ff)))
        return '"' + ''.join(o) + '"'
    def venv():
        # What site.venv() reads: pyvenv.cfg beside the executable or
        # one level up.  (prefix, system site-packages too?), or None.
        exe = os.path.abspath(sys.executable)
        pre = os.path.dirname(os.path.dirname(exe))
        system = True
        for c in (os.path.join(os.path.dirname(exe), 'pyvenv.cfg'),
                  os.path.join(pre, 'pyvenv.cfg')):
            if not os.path.isfile(c):
                continue
            try:
                with open(c, encoding='utf-8') as f:
                    for line in f:
                        k, eq, v = line.partition('=')
                        if eq and (k.strip().lower() ==
                                   'include-system-site-packages'):
                            system = v.strip().lower() == 'true'
            except (OSError, ValueError):
                pass
            return pre, system
        return None
    def located():
        # The path start-up would search, in site.main()'s order: sys.path
        # as -S leaves it, a venv's site-packages, the user site (where
        # site enables it in a clean environment), then the other
        # site-packages directories; no .pth file is run.
        paths = [d for d in sys.path if d]
        v = venv()
        pre = None
        if v is not None:
            # As site.venv() does; Debian's getsitepackages() looks.
            sys.prefix = sys.exec_prefix = v[0]
            pre = [v[0]]
            paths += site.getsitepackages(pre)
            if v[1]:
                pre += site.PREFIXES
        try:
            if ((v is None or v[1]) and os.getuid() == os.geteuid() and
                    os.getgid() == os.getegid()):
                u = site.getusersitepackages()
                if os.path.isdir(u):
                    paths.append(u)
        except Exception:
            pass
        try:
            sp = site.getsitepackages(pre)
        except Exception:
            sp = []
        paths += [d for d in sp if d not in paths]
        s = None
        for f in sys.meta_path:
            if getattr(f, '__name__', '') == 'PathFinder':
                try:
                    s = f.find_spec('sitecustomize', paths)
                except Exception:
                    s = None
                break
        return [], paths, sp, s
    if sys.argv[1:2] == ['=locate']:
        names, paths, sp, s = located()
    else:
        names = sys.argv[1:]
        if sys.path and sys.path[0] == '':
            del sys.path[0]
        paths = sys.path
        m = sys.modules.get('sitecustomize')
        s = getattr(m, '__spec__', None)
        for f in ([] if s is not None else sys.meta_path):
            try:
                s = f.find_spec('sitecustomize', None)
            except Exception:
                s = None
            if s is not None:
                break
        try:
            sp = site.getsitepackages()
        except Exception:
            sp = []
    origin = getattr(s, 'origin', None)
    dangling = None
    if origin is None:
        for d in paths:
            c = os.path.join(d, 'sitecustomize.py')
            if d and os.path.islink(c) and not os.path.exists(c):
                dangling = c
                break
    r = ['{"executable":', q(sys.executable),
         ',"version":', q(sys.version.split()[0]),
         ',"origin":', q(origin),
         ',"dangling":', q(dangling),
         ',"imported":', q(getattr(sys.modules.get('sitecustomize'),
                                      '__file__', None)),
         ',"site_packages":[', ','.join(q(p) for p in sp),
         '],"values":{',
         ','.join(q(n) + ':' + q(os.environ.get(n)) for n in names),
         '}}']
    for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            f.flush()
        except Exception:
            pass
    b = ('\n--envctl-probe-v1-3f9c2a61--\n' + ''.join(r) +
         '\n').encode('ascii')
    while b:
        b = b[os.write(1, b):]
    os._exit(0)
_envctl_probe()
