# forkserver.py - the agent's fork server (agent/forkserver.h): run as
# `INTERP -S -c THIS SCRIPT [classic]`; its protocol with the agent and
# what each child does are described above `server` in agent/forkserver.c.
# Compiled into envctl-agent at build time.
import sys, os
def _envctl_child(code, fds, base, extra, args, st, os=os, sys=sys):
    os.setpgid(0, 0)
    z = os.open('/dev/null', os.O_RDONLY)
    os.dup2(z, 0)
    os.dup2(fds[0], 1)
    os.dup2(fds[1], 2)
    for fd in fds + [z]:
        if fd > 2:
            os.close(fd)
    site, said = st
    for fd, b in said:
        while b:
            b = b[os.write(fd, b):]
    os.environ.clear()
    for k, v in base + extra:
        os.environb[k] = v
    sys.argv[:] = ['-c'] + [os.fsdecode(a) for a in args]
    if sys.path[:1] == ['']:
        del sys.path[0]
    p = os.environ.get('PYTHONPATH', '').split(os.pathsep)
    p = [d for d in p if d]
    if site is None:
        sys.path[0:0] = p
    elif p:
        q = []
        for d in [os.path.abspath(d) for d in p] + sys.path:
            if d not in q:
                q.append(d)
        sys.path[:] = q
    if os.environ.get('PYTHONDONTWRITEBYTECODE'):
        sys.dont_write_bytecode = True
    sys.path_importer_cache.clear()
    g = sys.modules['__main__'].__dict__
    for k in [k for k in g if k[:2] != '__']:
        del g[k]
    try:
        if site is None:
            import site
            site.main()
        else:
            site.execsitecustomize()
            if site.ENABLE_USER_SITE:
                site.execusercustomize()
    except BaseException:
        os._exit(255)
    sys.path.insert(0, '')
    exec(code, g)
    return 0
def _envctl_site(os=os, sys=sys):
    try:
        fds = [os.memfd_create('envctl-site') for i in (1, 2)]
    except (AttributeError, OSError):
        return None, ()
    if sys.path[:1] == ['']:
        del sys.path[0]
    import site
    keep = [os.dup(0), os.dup(1), os.dup(2)]
    z = os.open('/dev/null', os.O_RDONLY)
    for fd, to in ((z, 0), (fds[0], 1), (fds[1], 2)):
        os.dup2(fd, to)
    os.close(z)
    c = site.execsitecustomize, site.execusercustomize
    site.execsitecustomize = site.execusercustomize = lambda: None
    try:
        site.main()
    finally:
        site.execsitecustomize, site.execusercustomize = c
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except BaseException:
                pass
        for fd in (0, 1, 2):
            os.dup2(keep[fd], fd)
    said = []
    for fd, m in ((1, fds[0]), (2, fds[1])):
        os.lseek(m, 0, 0)
        b = d = os.read(m, 1 << 16)
        while d:
            d = os.read(m, 1 << 16)
            b += d
        if b:
            said.append((fd, b))
    for fd in fds + keep:
        os.close(fd)
    try:
        if len(os.listdir('/proc/self/task')) == 1:
            return site, said
    except OSError:
        pass
    return None
def _envctl_server(os=os, sys=sys):
    if not sys.flags.no_site or 'site' in sys.modules:
        return
    before = set(sys.modules)
    import _socket, gc
    try:
        import _signal as sig
    except ImportError:
        import signal as sig
    for m in [m for m in sys.modules if m not in before]:
        del sys.modules[m]
    cur = [0]
    def die(n, f):
        if cur[0]:
            for k in (os.killpg, os.kill):
                try:
                    k(cur[0], sig.SIGKILL)
                except OSError:
                    pass
        os._exit(1)
    term = [sig.SIGTERM]
    a = sys.argv.pop(1)
    if a[:1] == '/':
        m = (sys.modules.get('_frozen_importlib_external') or
             sys.modules['_frozen_importlib'])
        try:
            code = m.SourceFileLoader('__main__', a)
            code = code.get_code('__main__')
        except Exception:
            code = compile(open(a).read(), a, 'exec')
    else:
        code = compile(a, '<string>', 'exec')
    base = list(os.environb.items())
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, 0)
    st = None, ()
    if sys.argv[1:] != ['classic']:
        st = _envctl_site()
        if st is None:
            s.send(b'threads')
            os._exit(0)
    td = sig.getsignal(sig.SIGTERM)
    if td is None:
        td = sig.SIG_DFL
    sig.signal(sig.SIGTERM, die)
    ready = b'\0'.join([b'ready',
                        str(sys.flags.ignore_environment).encode()] +
                       [k + b'=' + v for k, v in base])
    base = list(os.environb.items())
    if hasattr(gc, 'freeze'):
        gc.freeze()
    s.send(ready)
    while True:
        m, anc, fl, ad = s.recvmsg(1 << 20, 64)
        if not m:
            return
        fds = []
        for lv, ty, d in anc:
            if lv == _socket.SOL_SOCKET and ty == _socket.SCM_RIGHTS:
                fds += [int.from_bytes(d[i:i + 4], sys.byteorder)
                        for i in range(0, len(d) - len(d) % 4, 4)]
        f = m.split(b'\0')
        n = int(f[1])
        extra = [tuple(e.split(b'=', 1)) for e in f[2:2 + n]]
        if f[0] == b'last':
            s.send(('pid %d' % os.getpid()).encode())
            pid = 0
        else:
            sig.pthread_sigmask(sig.SIG_BLOCK, term)
            pid = os.fork()
        if pid == 0:
            sig.signal(sig.SIGTERM, td)
            sig.pthread_sigmask(sig.SIG_UNBLOCK, term)
            s.detach()
            r = 1
            try:
                r = _envctl_child(code, fds, base, extra, f[2 + n:], st)
            except SystemExit as e:
                r = e.code if isinstance(e.code, int) else 0
                if e.code is not None and not isinstance(e.code, int):
                    sys.stderr.write('%s\n' % (e.code,))
                    r = 1
            except BaseException:
                import traceback
                traceback.print_exc()
            finally:
                for f in (sys.stdout, sys.stderr):
                    try:
                        f.flush()
                    except BaseException:
                        pass
                os._exit(r)
        cur[0] = pid
        sig.pthread_sigmask(sig.SIG_UNBLOCK, term)
        for fd in fds:
            os.close(fd)
        s.send(('pid %d' % pid).encode())
        w = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        s.send(('exit %d %d' % (w.si_code, w.si_status)).encode())
        m = s.recv(64)
        os.waitpid(pid, 0)
        cur[0] = 0
        if not m:
            return
_envctl_server()
