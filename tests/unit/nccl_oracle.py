"""nccl_oracle.py - what the real NCCL library adds to the environment.

Run by check_ncclconf.c as the oracle for agent/ncclconf.c: loads
libnccl.so.2 (argv[1], else $ENVCTL_TEST_NCCL, else the first one found in
the usual places), calls ncclGetUniqueId(), which runs NCCL's initEnv()
(src/misc/param.cc) before anything needs a GPU, and writes to stdout
"version N\n" and then every environment entry that was added or changed,
each as NAME=VALUE followed by a NUL byte.  Exits 77 when there is no NCCL.
"""
import ctypes
import ctypes.util
import glob
import os
import sys


def find_nccl():
    if len(sys.argv) > 1 and sys.argv[1]:
        return sys.argv[1]
    if os.environ.get("ENVCTL_TEST_NCCL"):
        return os.environ["ENVCTL_TEST_NCCL"]
    found = ctypes.util.find_library("nccl")
    if found:
        return found
    for pattern in ("/usr/local/cuda*/lib*/libnccl.so.2",
                    "/usr/lib/*-linux-gnu/libnccl.so.2",
                    "/usr/local/lib/python3*/*-packages/nvidia/nccl/lib/"
                    "libnccl.so.2"):
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    return None


def environ_entries(libc):
    env = ctypes.POINTER(ctypes.c_char_p).in_dll(libc, "environ")
    out = []
    i = 0
    while env[i]:
        out.append(env[i])
        i += 1
    return out


def main():
    path = find_nccl()
    if path is None:
        sys.stderr.write("nccl_oracle: no libnccl.so.2 found\n")
        return 77
    libc = ctypes.CDLL(None)
    before = set(environ_entries(libc))
    try:
        nccl = ctypes.CDLL(path)
    except OSError as e:
        sys.stderr.write("nccl_oracle: %s\n" % e)
        return 77
    version = ctypes.c_int()
    nccl.ncclGetVersion(ctypes.byref(version))
    uid = ctypes.create_string_buffer(128)
    nccl.ncclGetUniqueId(uid)
    out = sys.stdout.buffer
    out.write(b"version %d\n" % version.value)
    for entry in environ_entries(libc):
        if entry not in before:
            out.write(entry + b"\0")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
