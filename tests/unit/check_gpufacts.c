/*
 * check_gpufacts.c - GPU host facts: the agent's parsers (agent/gpufacts.c)
 * against recorded real outputs (tests/data/gpu/, README.md there cites
 * each), the agent's op run for real (the CUDA 13.0 toolkit of
 * /usr/local/cuda-13.0 where present, recordings planted under the test
 * build's ENVCTL_TEST_GPU_ROOT, a venv holding a Triton layout and the
 * real libnccl.so.2), and the controller's strict reply parser
 * (controller/gpufacts.c).
 *
 * agent/gpufacts.c is compiled into this suite directly, as check_policy.c
 * does with agent/policy.c.  The NCCL version read from the library's
 * bytes is compared with what the library itself says through
 * ncclGetVersion() (python3 and ctypes as the oracle; no GPU needed).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/gpufacts.c"	/* see above */
#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/gpufacts.h"
#include "agenttest.h"
#include "testutil.h"

#define CUDA13		"/usr/local/cuda-13.0"
#define LIBNCCL		CUDA13 "/lib/libnccl.so.2"

/* Runs a shell command; its exit status. */
static int
sh(const char *cmd)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	struct tu_run r;
	int st;

	tu_run(&r, argv, NULL, NULL, 0);
	st = r.status;
	tu_run_free(&r);
	return st;
}

/* tests/data/gpu/REL, read whole (the test fails when it cannot). */
static char *
rec(const char *rel, size_t *len)
{
	char *p = xasprintf("tests/data/gpu/%s", rel), *path = tu_srcpath(p),
	    *s = tu_read(path, len);

	ck_assert_msg(s != NULL, "cannot read %s", path);
	free(p);
	free(path);
	return s;
}

static json_t *
parsed(int (*fn)(json_t **, const char *, size_t, struct err *),
    const char *rel)
{
	struct err e = ENVCTL_ERR_INIT;
	json_t *o;
	size_t len;
	char *s = rec(rel, &len);

	ck_assert_msg(fn(&o, s, len, &e) == 0, "%s: %s", rel, e.msg);
	free(s);
	return o;
}

static void
fails(int (*fn)(json_t **, const char *, size_t, struct err *),
    const char *text, const char *msg)
{
	struct err e = ENVCTL_ERR_INIT;
	json_t *o = NULL;

	ck_assert_int_eq(fn(&o, text, strlen(text), &e), ENVCTL_EPARSE);
	ck_assert_ptr_null(o);
	ck_assert_str_eq(e.msg, msg);
	err_release(&e);
}

START_TEST(test_driver)
{
	struct err e = ENVCTL_ERR_INIT;
	json_t *o = parsed(gpufacts_driver, "open-module/version");
	/* The proprietary format as NVIDIA's README and issue #19 give it. */
	static const char prop[] = "NVRM version: NVIDIA UNIX x86_64 Kernel "
	    "Module  580.65.06  Sun Jul 27 07:09:02 UTC 2025\n"
	    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
	static const char jetson[] = "NVRM version: NVIDIA UNIX Open Kernel "
	    "Module for aarch64  35.3.1  Release Build  "
	    "(buildbrain@mobile-u64-6289-d7000)  Sun Mar 19 08:09:33 PDT "
	    "2023\n";

	ck_assert_str_eq(jstr(o, "version"), "565.57.01");
	ck_assert_str_eq(jstr(o, "flavor"), "open");
	json_decref(o);
	ck_assert_int_eq(gpufacts_driver(&o, prop, strlen(prop), &e), 0);
	ck_assert_str_eq(jstr(o, "version"), "580.65.06");
	ck_assert_str_eq(jstr(o, "flavor"), "proprietary");
	json_decref(o);
	ck_assert_int_eq(gpufacts_driver(&o, jetson, strlen(jetson), &e), 0);
	ck_assert_str_eq(jstr(o, "version"), "35.3.1");
	json_decref(o);
	fails(gpufacts_driver, "GCC version: 12\n", "no 'NVRM version:' line");
	fails(gpufacts_driver, "x\nNVRM version: NVIDIA UNIX x86_64 Kernel "
	    "Module\n", "line 2: no version in the NVRM line");
}
END_TEST

START_TEST(test_smi_header)
{
	json_t *o = parsed(gpufacts_smi_header, "h100-sxm/nvidia-smi");

	ck_assert_str_eq(jstr(o, "driver"), "535.129.03");
	ck_assert_str_eq(jstr(o, "cuda"), "12.2");
	json_decref(o);
	o = parsed(gpufacts_smi_header, "b200-r610/nvidia-smi");
	ck_assert_str_eq(jstr(o, "driver"), "610.43.02");
	ck_assert_str_eq(jstr(o, "cuda"), "13.3");
	json_decref(o);
	o = parsed(gpufacts_smi_header, "rtx5070-nocuda/nvidia-smi");
	ck_assert_str_eq(jstr(o, "driver"), "575.64.03");
	assert_null(o, "cuda");
	json_decref(o);
	fails(gpufacts_smi_header, "NVIDIA-SMI has failed because it "
	    "couldn't communicate with the NVIDIA driver.\n",
	    "nvidia-smi printed no header with a driver version");
}
END_TEST

START_TEST(test_smi_query)
{
	json_t *o = parsed(gpufacts_smi_query, "h100-sxm/query.csv"), *g;
	static const char na[] = "0, NVIDIA B200, [N/A], 00000000:63:00.0, "
	    "[N/A]\n\n1, NVIDIA B200, 10.0, 00000000:68:00.0, 183359\n";
	struct err e = ENVCTL_ERR_INIT;

	ck_assert_int_eq(json_array_size(o), 1);
	g = json_array_get(o, 0);
	ck_assert_int_eq(jint(g, "index"), 0);
	ck_assert_str_eq(jstr(g, "name"), "NVIDIA H100 80GB HBM3");
	ck_assert_str_eq(jstr(g, "compute_cap"), "9.0");
	ck_assert_str_eq(jstr(g, "bus_id"), "00000000:04:00.0");
	ck_assert_int_eq(jint(g, "memory_mib"), 81559);
	json_decref(o);
	ck_assert_int_eq(gpufacts_smi_query(&o, na, strlen(na), &e), 0);
	ck_assert_int_eq(json_array_size(o), 2);
	assert_null(json_array_get(o, 0), "compute_cap");
	assert_null(json_array_get(o, 0), "memory_mib");
	ck_assert_int_eq(jint(json_array_get(o, 1), "memory_mib"), 183359);
	json_decref(o);
	/* A name longer than 31 bytes, as Blackwell's are. */
	o = parsed(gpufacts_smi_query, "rtxpro6000-pcie/query.csv");
	ck_assert_str_eq(jstr(json_array_get(o, 0), "name"),
	    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition");
	ck_assert_str_eq(jstr(json_array_get(o, 0), "compute_cap"), "12.0");
	ck_assert_int_eq(jint(json_array_get(o, 0), "memory_mib"), 97887);
	json_decref(o);
	o = parsed(gpufacts_smi_header, "rtxpro6000-pcie/nvidia-smi");
	ck_assert_str_eq(jstr(o, "driver"), "580.105.08");
	ck_assert_str_eq(jstr(o, "cuda"), "13.0");
	json_decref(o);
	fails(gpufacts_smi_query, "0, NVIDIA H100, 9.0, 00000000:04:00.0\n",
	    "nvidia-smi --query-gpu: line 1 is not 'index, name, "
	    "compute_cap, pci.bus_id, memory.total'");
	fails(gpufacts_smi_query, "0, A, 9.0, B, 1 MiB\nx, A, 9.0, B, 1\n",
	    "nvidia-smi --query-gpu: line 2 is not 'index, name, "
	    "compute_cap, pci.bus_id, memory.total'");
	fails(gpufacts_smi_query, "0, A, nine, B, 1 MiB\n",
	    "nvidia-smi --query-gpu: line 1 is not 'index, name, "
	    "compute_cap, pci.bus_id, memory.total'");
}
END_TEST

START_TEST(test_topo)
{
	json_t *o = parsed(gpufacts_topo, "h100-sxm/topo-m"), *p;
	static const char topo3[] = "\tGPU0\tGPU1\tGPU2\n"
	    "GPU0\t X \tNODE\tPIX\nGPU1\tNODE\t X \tNV4\n"
	    "GPU2\tPIX\tNV4\t X \n";

	ck_assert_int_eq(jint(o, "gpus"), 8);
	ck_assert_int_eq(json_array_size(json_object_get(o, "pairs")), 28);
	ck_assert(jbool(o, "nvlink"));
	assert_null(o, "worst_pcie");
	p = json_array_get(json_object_get(o, "pairs"), 27);
	ck_assert_int_eq(jint(p, "a"), 6);
	ck_assert_int_eq(jint(p, "b"), 7);
	ck_assert_str_eq(jstr(p, "link"), "NV18");
	ck_assert_str_eq(jstr(p, "level"), "NVL");
	json_decref(o);

	o = parsed(gpufacts_topo, "rtxpro6000-pcie/topo-m");
	ck_assert_int_eq(jint(o, "gpus"), 2);
	ck_assert_int_eq(json_array_size(json_object_get(o, "pairs")), 1);
	ck_assert(!jbool(o, "nvlink"));
	ck_assert_str_eq(jstr(o, "worst_pcie"), "PHB");
	json_decref(o);

	/* Tabs, NIC columns and rows: only the GPU matrix counts. */
	o = parsed(gpufacts_topo, "rtx4090-sys/topo-m");
	ck_assert_int_eq(jint(o, "gpus"), 8);
	ck_assert_int_eq(json_array_size(json_object_get(o, "pairs")), 28);
	ck_assert_str_eq(jstr(o, "worst_pcie"), "SYS");
	json_decref(o);

	/* NODE is PHB for NCCL; the worst of the pairs wins. */
	ck_assert_int_eq(gpufacts_topo(&o, topo3, strlen(topo3), NULL), 0);
	ck_assert(jbool(o, "nvlink"));
	ck_assert_str_eq(jstr(o, "worst_pcie"), "PHB");
	ck_assert_str_eq(jstr(json_array_get(json_object_get(o, "pairs"), 0),
	    "link"), "NODE");
	json_decref(o);

	fails(gpufacts_topo, "nothing here\n",
	    "nvidia-smi topo -m: no 'GPU0 GPU1 ...' header");
	fails(gpufacts_topo, "\tGPU0\tGPU1\nGPU0\t X \tPHB\nGPU1\tWHAT\t X \n",
	    "nvidia-smi topo -m: line 3 is not row GPU1 of the 2-GPU matrix");
	fails(gpufacts_topo, "\tGPU0\tGPU1\nGPU0\t X \tPHB\n",
	    "nvidia-smi topo -m: line 3 is not row GPU1 of the 2-GPU matrix");
}
END_TEST

START_TEST(test_iommu)
{
	size_t len;
	char *s = rec("no-gpu/cmdline", &len);
	json_t *o = gpufacts_iommu(s, len);
	static const char pt[] = "BOOT_IMAGE=/vmlinuz intel_iommu=on iommu=pt";
	static const char off[] = "amd_iommu=off quiet";
	static const char last[] = "iommu.passthrough=1 iommu.passthrough=0";

	ck_assert_str_eq(jstr(o, "mode"), "default");
	ck_assert_int_eq(json_object_size(json_object_get(o, "args")), 0);
	json_decref(o);
	free(s);
	o = gpufacts_iommu(pt, strlen(pt));
	ck_assert_str_eq(jstr(o, "mode"), "passthrough");
	ck_assert_str_eq(jstr(o, "args.intel_iommu"), "on");
	json_decref(o);
	o = gpufacts_iommu(off, strlen(off));
	ck_assert_str_eq(jstr(o, "mode"), "off");
	json_decref(o);
	o = gpufacts_iommu(last, strlen(last));
	ck_assert_str_eq(jstr(o, "mode"), "on");
	json_decref(o);
}
END_TEST

START_TEST(test_versions)
{
	static const char vj[] = "{\"cuda\": {\"name\": \"CUDA SDK\", "
	    "\"version\": \"12.4.1\"}}";
	static const char nvcc[] = "nvcc: NVIDIA (R) Cuda compiler driver\n"
	    "Cuda compilation tools, release 13.0, V13.0.88\n";
	struct tu_run r;
	char *argv[] = { CUDA13 "/bin/ptxas", "--version", NULL }, *v;
	json_t *o;

	ck_assert_int_eq(gpufacts_release(&o, nvcc, strlen(nvcc), NULL), 0);
	ck_assert_str_eq(jstr(o, "version"), "13.0");
	ck_assert_str_eq(jstr(o, "full"), "13.0.88");
	json_decref(o);
	fails(gpufacts_release, "ptxas: unknown option\n",
	    "no 'release X.Y' in the --version output");
	ck_assert_int_eq(gpufacts_version_json(&v, vj, strlen(vj), NULL), 0);
	ck_assert_str_eq(v, "12.4.1");
	free(v);
	v = gpufacts_distinfo_version("nvidia_cuda_nvcc-13.0.88.dist-info",
	    "nvidia_cuda_nvcc");
	ck_assert_str_eq(v, "13.0.88");
	free(v);
	v = gpufacts_distinfo_version("nvidia_cuda_nvcc_cu12-12.8.93"
	    ".dist-info", "nvidia_cuda_nvcc");
	ck_assert_str_eq(v, "12.8.93");
	free(v);
	ck_assert_ptr_null(gpufacts_distinfo_version("nvidia_cuda_nvrtc-13.0"
	    ".88.dist-info", "nvidia_cuda_nvcc"));
	if (access(argv[0], X_OK) != 0) {
		tu_skip("test_versions", "no " CUDA13 "/bin/ptxas");
		return;
	}
	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(gpufacts_release(&o, r.out, r.outlen, NULL), 0);
	ck_assert_str_eq(jstr(o, "version"), "13.0");
	json_decref(o);
	tu_run_free(&r);
}
END_TEST

START_TEST(test_nccl_scan)
{
	static const char lib[] = "junk\0NCCL version 2.28.9+cuda13.0\0";
	struct tu_run r;
	char *argv[] = { (char *)tu_python(), "-c",
	    "import ctypes,sys\n"
	    "l = ctypes.CDLL(sys.argv[1])\n"
	    "v = ctypes.c_int()\n"
	    "assert l.ncclGetVersion(ctypes.byref(v)) == 0\n"
	    "v = v.value\n"
	    "print('%d.%d.%d' % (v // 10000, v // 100 % 100, v % 100))\n",
	    LIBNCCL, NULL };
	size_t keep, have = 0, k, n;
	char *v = NULL, *buf;
	FILE *f;

	v = gpufacts_nccl_scan(lib, sizeof(lib) - 1, &keep);
	ck_assert_str_eq(v, "2.28.9");
	free(v);
	/* Cut inside the version: nothing yet, keep from the tag on. */
	ck_assert_ptr_null(gpufacts_nccl_scan(lib, 22, &keep));
	ck_assert_int_eq(keep, 17);
	if (access(LIBNCCL, R_OK) != 0) {
		tu_skip("test_nccl_scan", "no " LIBNCCL);
		return;
	}
	/* The agent's reading, in small windows, against ncclGetVersion(). */
	ck_assert_ptr_nonnull(f = fopen(LIBNCCL, "rb"));
	buf = xmalloc(65536 + 64);
	v = NULL;
	while (v == NULL && (n = fread(buf + have, 1, 65536, f)) > 0) {
		have += n;
		v = gpufacts_nccl_scan(buf, have, &k);
		k = k > 64 ? 64 : k;
		memmove(buf, buf + have - k, k);
		have = k;
	}
	fclose(f);
	free(buf);
	ck_assert_ptr_nonnull(v);
	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_msg(r.status == 0, "oracle: %s", r.errout);
	r.out[strcspn(r.out, "\n")] = '\0';
	ck_assert_str_eq(v, r.out);
	free(v);
	tu_run_free(&r);
}
END_TEST

/* ---- the agent, for real ---- */

START_TEST(test_agent_cuda13)
{
	json_t *rep;

	if (access(CUDA13 "/bin/ptxas", X_OK) != 0) {
		tu_skip("test_agent_cuda13", "no CUDA 13.0 toolkit in "
		    CUDA13);
		return;
	}
	rep = agent_ask(agent_bin(), NULL, gpufacts_request(1,
	    ENVCTL_GPUFACTS_CUDA, NULL, 0, CUDA13, 20000));
	assert_ok(rep);
	ck_assert(jbool(rep, "cuda.exists"));
	ck_assert_str_eq(jstr(rep, "cuda.from"), "request");
	ck_assert_str_eq(jstr(rep, "cuda.version"), "13.0");
	/* No version.json there: the wheels' records say it. */
	ck_assert_str_eq(jstr(rep, "cuda.source"),
	    "dist-info nvidia_cuda_nvcc");
	ck_assert_str_eq(jstr(rep, "cuda.ptxas.version"), "13.0");
	ck_assert_str_eq(jstr(rep, "cuda.ptxas.path"), CUDA13 "/bin/ptxas");
	assert_null(rep, "gpu");
	json_decref(rep);
	rep = agent_ask(agent_bin(), NULL, gpufacts_request(2,
	    ENVCTL_GPUFACTS_CUDA, NULL, 0, "/nonexistent/cuda", 20000));
	assert_ok(rep);
	ck_assert(!jbool(rep, "cuda.exists"));
	assert_null(rep, "cuda.version");
	json_decref(rep);
}
END_TEST

static void
plant(const char *root, const char *rel, const char *from)
{
	size_t len;
	char *s = rec(from, &len), *dir = xasprintf("%s/%s", root, rel), *p;

	*strrchr(dir, '/') = '\0';
	p = xasprintf("mkdir -p '%s'", dir);
	ck_assert_int_eq(sh(p), 0);
	free(p);
	free(tu_write(root, rel, s, len));
	free(s);
	free(dir);
}

/* A host with an H100 box's recordings, the open module's /proc file. */
START_TEST(test_agent_planted)
{
	const char *faults = getenv("ENVCTL_AGENT_FAULTS");
	char *root = tu_mkdtemp(), *env, *smi, *src, *p;
	struct gpufacts *gf;
	struct buf text = ENVCTL_BUF_INIT;
	const char *name, *val;
	json_t *rep;
	size_t i;

	if (faults == NULL || access(faults, X_OK) != 0) {
		tu_skip("test_agent_planted", "no build/envctl-agent-faults "
		    "(ENVCTL_AGENT_FAULTS)");
		tu_rmtree(root);
		free(root);
		return;
	}
	plant(root, "proc/driver/nvidia/version", "open-module/version");
	plant(root, "proc/cmdline", "no-gpu/cmdline");
	src = tu_srcpath("tests/data/gpu/h100-sxm");
	p = xasprintf("#!/bin/sh\n"
	    "case \"$*\" in\n"
	    "'') exec cat '%s/nvidia-smi' ;;\n"
	    "--query-gpu=index,name,compute_cap,pci.bus_id,memory.total"
	    "' --format=csv,noheader') exec cat '%s/query.csv' ;;\n"
	    "'topo -m') exec cat '%s/topo-m' ;;\n"
	    "esac\nexit 2\n", src, src, src);
	ck_assert_int_eq(sh(env = xasprintf("mkdir -p '%s/usr/bin'",
	    root)), 0);
	free(env);
	smi = tu_writes(root, "usr/bin/nvidia-smi", p);
	free(p);
	ck_assert_int_eq(chmod(smi, 0755), 0);
	env = xasprintf("ENVCTL_TEST_GPU_ROOT=%s", root);
	rep = agent_ask(faults, env, gpufacts_request(1,
	    ENVCTL_GPUFACTS_GPU, NULL, 0, NULL, 20000));
	assert_ok(rep);
	ck_assert_str_eq(jstr(rep, "gpu.driver.version"), "565.57.01");
	ck_assert_str_eq(jstr(rep, "gpu.nvidia_smi"), smi);
	ck_assert_str_eq(jstr(rep, "gpu.driver_cuda"), "12.2");
	ck_assert_int_eq(json_array_size(jget(rep, "gpu.gpus")), 1);
	ck_assert_int_eq(jint(rep, "gpu.topology.gpus"), 8);
	ck_assert_int_eq(json_array_size(jget(rep, "gpu.errors")), 0);
	ck_assert_int_eq(jint(rep, "arch"), 90);
	ck_assert_int_eq(gpufacts_parse(&gf, rep, NULL), 0);
	for (i = 0; i < gpufacts_nvars(); i++) {
		val = gpufacts_var(gf, i, &name);
		if (strcmp(name, "envctl_gpu_count") == 0)
			ck_assert_str_eq(val, "1");
		else if (strcmp(name, "envctl_gpu_arch") == 0)
			ck_assert_str_eq(val, "sm_90");
		else if (strcmp(name, "envctl_gpu_nvlink") == 0)
			ck_assert_str_eq(val, "true");
		else if (strcmp(name, "envctl_gpu_pcie_level") == 0)
			ck_assert_ptr_null(val);
		else if (strcmp(name, "envctl_driver_cuda") == 0)
			ck_assert_str_eq(val, "12.2");
		else if (strcmp(name, "envctl_iommu") == 0)
			ck_assert_str_eq(val, "default");
	}
	gpufacts_text(&text, gf, "  ");
	ck_assert_msg(strstr(text.data, "  gpu: driver 565.57.01 (open "
	    "module), supports CUDA 12.2, 1 GPU\n    GPU0: NVIDIA H100 80GB "
	    "HBM3, compute capability 9.0 (sm_90), 00000000:04:00.0, 81559 "
	    "MiB\n"
	    "    topology: NVLink yes, worst PCIe path none\n") != NULL,
	    "%s", text.data);
	buf_release(&text);
	gpufacts_free(gf);
	json_decref(rep);
	/* nvidia-smi failing is an error of its own, not the op's. */
	ck_assert_int_eq(chmod(smi, 0644), 0);
	rep = agent_ask(faults, env, gpufacts_request(2,
	    ENVCTL_GPUFACTS_GPU, NULL, 0, NULL, 20000));
	assert_ok(rep);
	ck_assert_int_eq(json_array_size(jget(rep, "gpu.errors")), 3);
	json_decref(rep);
	/* A host without a GPU: empty facts. */
	p = xasprintf("rm -rf '%s/usr' '%s/proc/driver'", root, root);
	ck_assert_int_eq(sh(p), 0);
	free(p);
	rep = agent_ask(faults, env, gpufacts_request(3,
	    ENVCTL_GPUFACTS_GPU, NULL, 0, NULL, 20000));
	assert_ok(rep);
	assert_null(rep, "gpu.driver");
	assert_null(rep, "gpu.nvidia_smi");
	ck_assert_int_eq(json_array_size(jget(rep, "gpu.gpus")), 0);
	ck_assert_int_eq(json_array_size(jget(rep, "gpu.errors")), 0);
	json_decref(rep);
	free(env);
	free(smi);
	free(src);
	tu_rmtree(root);
	free(root);
}
END_TEST


/* A read request for a file in dir whose checks are those given. */
static json_t *
checks_req(const char *dir, json_t *checks)
{
	char *f = xasprintf("%s/site.py", dir);
	json_t *req;

	req = json_pack("{s:s,s:i,s:s,s:s,s:[],s:o,s:i}", "op", "read", "id",
	    1, "interpreter", tu_python(), "path", f, "vars", "checks", checks,
	    "timeout_ms", 20000);
	free(f);
	return req;
}

/* One check entry; major 0: none. */
static json_t *
one(const char *kind, const char *path, int major)
{
	json_t *c = json_pack("{s:s,s:s,s:s}", "name", "V", "kind", kind,
	    "path", path);

	if (major > 0)
		json_object_set_new(c, "cuda_major", json_integer(major));
	return c;
}

static void
assert_check(const json_t *rep, size_t i, int ok, const char *reason,
    const char *version, const char *driver_cuda)
{
	const json_t *c = json_array_get(jget(rep, "checks"), i);
	const char *r = json_string_value(json_object_get(c, "reason"));
	const char *v = json_string_value(json_object_get(c, "version"));
	const char *d = json_string_value(json_object_get(c, "driver_cuda"));

	ck_assert_msg(c != NULL, "no checks[%zu]", i);
	ck_assert_msg(json_is_true(json_object_get(c, "ok")) == ok,
	    "checks[%zu]: ok is not %d (reason %s)", i, ok, r);
	if (reason == NULL)
		ck_assert_msg(r == NULL, "checks[%zu]: reason '%s'", i, r);
	else
		ck_assert_msg(r != NULL && strcmp(r, reason) == 0,
		    "checks[%zu]: reason '%s', want '%s'", i, r, reason);
	ck_assert_msg(version == NULL ? v == NULL : v != NULL &&
	    strcmp(v, version) == 0, "checks[%zu]: version %s", i, v);
	ck_assert_msg(driver_cuda == NULL ? d == NULL : d != NULL &&
	    strcmp(d, driver_cuda) == 0, "checks[%zu]: driver_cuda %s", i, d);
}

/*
 * check: cuda-toolkit and ptxas on the faults agent: a CUDA 12.4 layout
 * (version.json, a ptxas that says release 12.4), a placeholder ptxas
 * that fails, and this machine's CUDA 13.0; with the H100 box's
 * nvidia-smi (driver 535.129.03, CUDA 12.2) planted, then without one.
 */
START_TEST(test_agent_checks)
{
	const char *faults = getenv("ENVCTL_AGENT_FAULTS");
	char *dir = tu_mkdtemp(), *root, *env, *p, *f, *c124, *ph;
	json_t *rep, *cs;

	if (faults == NULL || access(faults, X_OK) != 0) {
		tu_skip("test_agent_checks", "no build/envctl-agent-faults "
		    "(ENVCTL_AGENT_FAULTS)");
		tu_rmtree(dir);
		free(dir);
		return;
	}
	root = xasprintf("%s/root", dir);
	c124 = xasprintf("%s/cuda-12.4", dir);
	ph = xasprintf("%s/ph/bin/ptxas", dir);
	p = xasprintf("mkdir -p '%s/usr/bin' '%s/bin' '%s/ph/bin'", root,
	    c124, dir);
	ck_assert_int_eq(sh(p), 0);
	free(p);
	free(tu_writes(dir, "site.py", "\n"));
	free(tu_writes(c124, "version.json",
	    "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"12.4.1\"}}\n"));
	f = tu_writes(c124, "bin/ptxas", "#!/bin/sh\necho 'Cuda compilation "
	    "tools, release 12.4, V12.4.131'\n");
	ck_assert_int_eq(chmod(f, 0755), 0);
	free(f);
	f = tu_writes(dir, "ph/bin/ptxas", "#!/bin/sh\necho 'ptxas: no CUDA "
	    "toolkit here' >&2\nexit 1\n");
	ck_assert_int_eq(chmod(f, 0755), 0);
	free(f);
	p = tu_srcpath("tests/data/gpu/h100-sxm/nvidia-smi");
	f = xasprintf("#!/bin/sh\n[ $# -eq 0 ] && exec cat '%s'\nexit 2\n", p);
	free(p);
	p = tu_writes(root, "usr/bin/nvidia-smi", f);
	ck_assert_int_eq(chmod(p, 0755), 0);
	free(p);
	free(f);
	env = xasprintf("ENVCTL_TEST_GPU_ROOT=%s", root);

	cs = json_array();
	json_array_append_new(cs, one("cuda-toolkit", c124, 13));
	json_array_append_new(cs, one("cuda-toolkit", c124, 0));
	p = xasprintf("%s/bin/ptxas", c124);
	json_array_append_new(cs, one("ptxas", p, 13));
	json_array_append_new(cs, one("ptxas", p, 12));
	free(p);
	json_array_append_new(cs, one("ptxas", ph, 0));
	json_array_append_new(cs, one("cuda-toolkit", "/nonexistent/cuda",
	    0));
	p = xasprintf("%s/ph", dir);
	json_array_append_new(cs, one("cuda-toolkit", p, 13));
	free(p);
	json_array_append_new(cs, one("dir", c124, 0));
	rep = agent_ask(faults, env, checks_req(dir, cs));
	assert_ok(rep);
	assert_check(rep, 0, 0, "is CUDA 12.4, want 13", "12.4", "12.2");
	assert_check(rep, 1, 0, "is CUDA 12.4 but the driver supports 12.2 "
	    "(driver 535.129.03)", "12.4", "12.2");
	assert_check(rep, 2, 0, "is release 12.4, want 13", "12.4", "12.2");
	assert_check(rep, 3, 0, "is release 12.4 but the driver supports "
	    "12.2 (driver 535.129.03)", "12.4", "12.2");
	assert_check(rep, 4, 0, "reports no release: its --version exited "
	    "with status 1: ptxas: no CUDA toolkit here", NULL, "12.2");
	assert_check(rep, 5, 0, "does not exist", NULL, "12.2");
	p = xasprintf("is not a CUDA toolkit: %s/ph/bin/ptxas --version: "
	    "%s/ph/bin/ptxas exited with status 1: ptxas: no CUDA toolkit "
	    "here", dir, dir);
	assert_check(rep, 6, 0, p, NULL, "12.2");
	free(p);
	/* The old kinds keep their old answer. */
	ck_assert(jbool(json_array_get(jget(rep, "checks"), 7), "ok"));
	ck_assert_ptr_null(json_object_get(json_array_get(jget(rep,
	    "checks"), 7), "version"));
	json_decref(rep);

	if (access(CUDA13 "/bin/ptxas", X_OK) == 0) {
		cs = json_array();
		json_array_append_new(cs, one("cuda-toolkit", CUDA13, 13));
		json_array_append_new(cs, one("ptxas", CUDA13 "/bin/ptxas",
		    13));
		rep = agent_ask(faults, env, checks_req(dir, cs));
		assert_ok(rep);
		assert_check(rep, 0, 0, "is CUDA 13.0 but the driver supports "
		    "12.2 (driver 535.129.03; CUDA 13 needs 580 or later)",
		    "13.0", "12.2");
		assert_check(rep, 1, 0, "is release 13.0 but the driver "
		    "supports 12.2 (driver 535.129.03; CUDA 13 needs 580 or "
		    "later)", "13.0", "12.2");
		json_decref(rep);
		/* No driver: the version alone decides, and it says so. */
		cs = json_array();
		json_array_append_new(cs, one("cuda-toolkit", CUDA13, 13));
		json_array_append_new(cs, one("ptxas", CUDA13 "/bin/ptxas",
		    0));
		rep = agent_ask(faults, NULL, checks_req(dir, cs));
		assert_ok(rep);
		assert_check(rep, 0, 1, "not checked against the driver: no "
		    "nvidia-smi (no driver)", "13.0", NULL);
		assert_check(rep, 1, 1, "not checked against the driver: no "
		    "nvidia-smi (no driver)", "13.0", NULL);
		json_decref(rep);
	} else
		tu_skip("test_agent_checks (CUDA 13.0)", "no CUDA 13.0 "
		    "toolkit in " CUDA13);

	rep = agent_ask(faults, env, checks_req(dir, json_pack("[{s:s,s:s,s:s,"
	    "s:s}]", "name", "V", "kind", "ptxas", "path", "/x", "cuda_major",
	    "13")));
	ck_assert(!jbool(rep, "ok"));
	ck_assert_str_eq(jstr(rep, "message"), "read: checks[0]: "
	    "'cuda_major' must be an integer from 1 to 99");
	json_decref(rep);
	free(env);
	free(root);
	free(c124);
	free(ph);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
 * A venv whose site-packages hold Triton 3.6's layout (its metadata, the
 * source text that picks ptxas-blackwell, the bundled tool: the real
 * ptxas) and the nvidia-nccl wheel's library (the real libnccl.so.2), and
 * a .pth file pointing TRITON_PTXAS_BLACKWELL_PATH at nothing (Debian's
 * python3 has a sitecustomize of its own that would shadow one there).
 */
START_TEST(test_agent_venv)
{
	char *dir = tu_mkdtemp(), *cmd, *sp, *py, *out;
	json_t *rep, *t;
	struct tu_run r;
	char *argv[] = { (char *)tu_python(), "-c",
	    "import sysconfig; print(sysconfig.get_paths()['purelib'])",
	    NULL };

	if (access(CUDA13 "/bin/ptxas", X_OK) != 0 ||
	    access(LIBNCCL, R_OK) != 0) {
		tu_skip("test_agent_venv", "no " CUDA13 " ptxas and "
		    "libnccl.so.2");
		tu_rmtree(dir);
		free(dir);
		return;
	}
	cmd = xasprintf("'%s' -m venv --without-pip '%s/v'", tu_python(),
	    dir);
	if (sh(cmd) != 0) {
		tu_skip("test_agent_venv", "python3 -m venv does not work");
		free(cmd);
		tu_rmtree(dir);
		free(dir);
		return;
	}
	free(cmd);
	py = xasprintf("%s/v/bin/python3", dir);
	argv[0] = py;
	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_int_eq(r.status, 0);
	r.out[strcspn(r.out, "\n")] = '\0';
	sp = xstrdup(r.out);
	tu_run_free(&r);
	cmd = xasprintf("set -e; cd '%s'; "
	    "mkdir -p triton-3.6.0.dist-info triton/backends/nvidia/bin "
	    "nvidia/nccl/lib nvidia_nccl_cu13-2.28.9.dist-info; "
	    "printf 'Metadata-Version: 2.1\\nName: triton\\nVersion: 3.6.0\\n'"
	    " >triton-3.6.0.dist-info/METADATA; "
	    ": >triton-3.6.0.dist-info/RECORD; : >triton/__init__.py; "
	    "printf 'def get_ptxas(arch):\\n    return knobs.nvidia."
	    "ptxas_blackwell if arch >= 100 else knobs.nvidia.ptxas\\n' "
	    ">triton/backends/nvidia/compiler.py; "
	    "ln -s " CUDA13 "/bin/ptxas triton/backends/nvidia/bin/"
	    "ptxas-blackwell; "
	    "ln -s " LIBNCCL " nvidia/nccl/lib/libnccl.so.2; "
	    "printf 'import os; os.environ.setdefault("
	    "\"TRITON_PTXAS_BLACKWELL_PATH\", \"/nonexistent/ptxas\")\\n' "
	    ">envctl_test.pth", sp);
	ck_assert_int_eq(sh(cmd), 0);
	free(cmd);
	rep = json_pack("{s:s,s:i,s:[s],s:[s],s:i,s:i}", "op", "gpufacts",
	    "id", 1, "facts", "triton", "interpreters", py, "arch", 120,
	    "timeout_ms", 30000);
	json_array_append_new(json_object_get(rep, "facts"),
	    json_string("nccl"));
	rep = agent_ask(agent_bin(), NULL, rep);
	assert_ok(rep);
	t = json_array_get(jget(rep, "interpreters"), 0);
	assert_null(t, "error");
	ck_assert_str_eq(jstr(t, "triton.version"), "3.6.0");
	ck_assert_str_eq(jstr(t, "triton.tool"), "ptxas-blackwell");
	ck_assert_str_eq(jstr(t, "triton.variable"),
	    "TRITON_PTXAS_BLACKWELL_PATH");
	ck_assert_str_eq(jstr(t, "triton.value"), "/nonexistent/ptxas");
	/* It fails, so Triton uses its own, without a word. */
	ck_assert(jbool(t, "triton.fallback"));
	ck_assert_str_eq(jstr(t, "triton.ptxas.version"), "13.0");
	out = xasprintf("%s/triton/backends/nvidia/bin/ptxas-blackwell", sp);
	ck_assert_str_eq(jstr(t, "triton.ptxas.path"), out);
	free(out);
	ck_assert_str_eq(jstr(t, "nccl.version"), "2.28.9");
	ck_assert_str_eq(jstr(t, "nccl.how"), "sys.path");
	ck_assert_str_eq(jstr(t, "nccl.wheel"), "nvidia_nccl_cu13-2.28.9");
	json_decref(rep);
	free(sp);
	free(py);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* ---- the controller's parser ---- */

static const char good[] =
    "{\"id\":1,\"ok\":true,\"arch\":120,\"facts\":[\"gpu\",\"nccl\"],"
    "\"gpu\":{\"driver\":{\"version\":\"580.65.06\",\"flavor\":\"open\"},"
    "\"nvidia_smi\":\"/usr/bin/nvidia-smi\",\"driver_cuda\":\"13.0\","
    "\"gpus\":[{\"index\":0,\"name\":\"RTX\",\"compute_cap\":\"12.0\","
    "\"bus_id\":\"00000000:01:00.0\",\"memory_mib\":97887}],"
    "\"topology\":{\"gpus\":1,\"pairs\":[],\"nvlink\":false,"
    "\"worst_pcie\":null},\"iommu\":{\"mode\":\"default\",\"args\":{}},"
    "\"errors\":[]},"
    "\"cuda\":null,"
    "\"interpreters\":[{\"interpreter\":\"python3\",\"executable\":"
    "\"/usr/bin/python3\",\"python\":\"3.11.2\",\"error\":null,"
    "\"triton\":null,\"nccl\":{\"path\":\"/x/libnccl.so.2\",\"how\":"
    "\"sys.path\",\"wheel\":null,\"version\":\"2.28.9\",\"error\":null}}]}";

static const struct {
	const char	*path;	/* dotted, [N] for an index */
	const char	*value;	/* JSON, NULL: delete it */
	const char	*msg;
} broken[] = {
	{ "arch", "\"120\"", "'arch' must be an integer, 0 or more, or null" },
	{ "facts", "[\"gpu\",\"disk\"]", "'facts[1]' must be one of gpu, "
	    "cuda, nccl, triton" },
	{ "gpu", "[]", "'gpu' must be an object or null" },
	{ "gpu.driver.version", NULL, "'gpu.driver.version' must be a "
	    "string" },
	{ "gpu.gpus[0].compute_cap", "12", "'gpu.gpus[0].compute_cap' must "
	    "be a string or null" },
	{ "gpu.gpus[0].memory_mib", "-1", "'gpu.gpus[0].memory_mib' must be "
	    "an integer, 0 or more, or null" },
	{ "gpu.topology.nvlink", "0", "'gpu.topology.nvlink' must be true "
	    "or false" },
	{ "gpu.iommu.args", "{\"iommu\":1}", "'gpu.iommu.args.iommu' must "
	    "be a string" },
	{ "gpu.errors", "[1]", "'gpu.errors[0]' must be a string" },
	{ "interpreters", NULL, "'interpreters' must be an array of "
	    "objects" },
	{ "interpreters[0].nccl.how", "null", "'interpreters[0].nccl.how' "
	    "must be a string" },
	{ "cuda", "{\"home\":\"/c\"}", "'cuda.from' must be a string" },
};

/* Sets (or deletes) the member at a dotted path of o. */
static void
set_path(json_t *o, const char *path, const char *value)
{
	char *p = xstrdup(path), *k = p, *dot, *br;
	json_t *v = value != NULL ? json_loads(value, JSON_DECODE_ANY, NULL) :
	    NULL;

	for (;;) {
		dot = strchr(k, '.');
		if (dot != NULL)
			*dot = '\0';
		br = strchr(k, '[');
		if (br != NULL)
			*br = '\0';
		if (dot == NULL && br == NULL) {
			if (v != NULL)
				json_object_set_new(o, k, v);
			else
				json_object_del(o, k);
			break;
		}
		o = json_object_get(o, k);
		if (br != NULL)
			o = json_array_get(o, (size_t)strtoul(br + 1, NULL, 10));
		if (dot == NULL)
			break;
		k = dot + 1;
	}
	free(p);
}

START_TEST(test_parse_broken)
{
	struct err e = ENVCTL_ERR_INIT;
	struct gpufacts *gf = NULL;
	json_t *o = json_loads(good, 0, NULL);
	char *want;

	set_path(o, broken[_i].path, broken[_i].value);
	ck_assert_int_eq(gpufacts_parse(&gf, o, &e), ENVCTL_EPARSE);
	ck_assert_ptr_null(gf);
	want = xasprintf("gpufacts reply: %s", broken[_i].msg);
	ck_assert_str_eq(e.msg, want);
	free(want);
	err_release(&e);
	json_decref(o);
}
END_TEST

START_TEST(test_parse_good)
{
	struct err e = ENVCTL_ERR_INIT;
	struct gpufacts *gf;
	struct buf b = ENVCTL_BUF_INIT;
	json_t *o = json_loads(good, 0, NULL), *j;
	const char *name, *v;

	ck_assert_int_eq(gpufacts_parse(&gf, o, &e), 0);
	v = gpufacts_var(gf, 3, &name);
	ck_assert_str_eq(name, "envctl_gpu_arch");
	ck_assert_str_eq(v, "sm_120");
	v = gpufacts_var(gf, 4, &name);
	ck_assert_str_eq(v, "false");
	v = gpufacts_var(gf, 11, &name);
	ck_assert_str_eq(name, "envctl_nccl_version");
	ck_assert_str_eq(v, "2.28.9");
	ck_assert_ptr_null(gpufacts_var(gf, 9, &name));	/* no cuda asked */
	j = gpufacts_json(gf);
	ck_assert_str_eq(jstr(j, "vars.envctl_gpu_compute_cap"), "12.0");
	json_decref(j);
	gpufacts_text(&b, gf, "");
	ck_assert_msg(strstr(b.data, "python3 (/usr/bin/python3, Python "
	    "3.11.2):\n  nccl 2.28.9: /x/libnccl.so.2 (sys.path)\n") != NULL,
	    "%s", b.data);
	buf_release(&b);
	gpufacts_free(gf);
	/* An error reply is the agent's error. */
	json_decref(o);
	o = json_loads("{\"id\":1,\"ok\":false,\"code\":\"EINVALID\","
	    "\"message\":\"gpufacts: 'facts' must be an array\"}", 0, NULL);
	ck_assert_int_eq(gpufacts_parse(&gf, o, &e), ENVCTL_EINVALID);
	err_release(&e);
	json_decref(o);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gpufacts");
	TCase *tc = tcase_create("parsers");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_driver);
	tcase_add_test(tc, test_smi_header);
	tcase_add_test(tc, test_smi_query);
	tcase_add_test(tc, test_topo);
	tcase_add_test(tc, test_iommu);
	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_nccl_scan);
	suite_add_tcase(s, tc);
	tc = tcase_create("agent");
	tcase_add_test(tc, test_agent_cuda13);
	tcase_add_test(tc, test_agent_planted);
	tcase_add_test(tc, test_agent_checks);
	tcase_add_test(tc, test_agent_venv);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	tc = tcase_create("controller");
	tcase_add_loop_test(tc, test_parse_broken, 0,
	    sizeof(broken) / sizeof(broken[0]));
	tcase_add_test(tc, test_parse_good);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
