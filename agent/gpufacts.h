/*
 * gpufacts.h - the texts GPU host facts come from, taken apart.
 *
 * Pure: each parser reads bytes it is given (a file's, a program's
 * output) and builds a new JSON value the caller owns; nothing here
 * touches the file system or runs anything (op_gpufacts.h does).
 * Strings in the values are valid UTF-8.  A text that is not what the
 * program prints is ENVCTL_EPARSE naming the line; docs/gpufacts.md
 * names the source and a real recording of each format.
 */
#ifndef ENVCTL_AGENT_GPUFACTS_H
#define ENVCTL_AGENT_GPUFACTS_H

#include <jansson.h>
#include <stddef.h>

struct err;

/*
 * /proc/driver/nvidia/version: {"version": "580.65.06", "flavor":
 * "open" | "proprietary"}.  The version is the first word of the NVRM
 * line made of digits and dots (both modules' formats, and the
 * "for ARCH" of the open one).  EPARSE without such a line.
 */
int	gpufacts_driver(json_t **out, const char *s, size_t len,
	    struct err *err);
/*
 * nvidia-smi's header: {"driver": "580.65.06" | null, "cuda": "13.0" |
 * null}, from "Driver Version:" (R610: "KMD Version:") and "CUDA
 * Version:" ("CUDA Driver Version:", R610 "CUDA UMD Version:"); "N/A"
 * is null.  EPARSE when no header line has a driver version.
 */
int	gpufacts_smi_header(json_t **out, const char *s, size_t len,
	    struct err *err);
/*
 * `nvidia-smi --query-gpu=index,name,compute_cap,pci.bus_id,memory.total
 * --format=csv,noheader`: an array of {"index", "name", "compute_cap":
 * "9.0" | null, "bus_id", "memory_mib": N | null}, one per line.
 */
int	gpufacts_smi_query(json_t **out, const char *s, size_t len,
	    struct err *err);
/*
 * `nvidia-smi topo -m`: {"gpus": N, "pairs": [{"a", "b", "link": "NV18",
 * "level": "NVL"}], "nvlink": bool, "worst_pcie": LEVEL | null}, each
 * unordered GPU pair once, from GPU a's row.  Levels are NCCL's names
 * (src/graph/paths.cc): NV# is NVL, PIX, PXB, PHB (NODE too, as NCCL
 * ranks a path through one CPU's host bridges), SYS (SOC, its old name).
 * worst_pcie is the worst level of the pairs not joined by NVLink.
 */
int	gpufacts_topo(json_t **out, const char *s, size_t len,
	    struct err *err);
/* NCCL's rank of a level name (LOC 0 .. SYS 7), or -1. */
int	gpufacts_level_rank(const char *level);
/*
 * /proc/cmdline: {"mode": "default" | "off" | "passthrough" | "on",
 * "args": {"intel_iommu": "on", ...}} from intel_iommu=, amd_iommu=,
 * iommu=, iommu.passthrough= and iommu.strict= (the last word of each
 * wins, as the kernel's parser sees them in order).  Never fails.
 */
json_t	*gpufacts_iommu(const char *s, size_t len);
/*
 * `ptxas --version` / `nvcc --version`: {"version": "13.0", "full":
 * "13.0.88" | null} from "release 13.0, V13.0.88".  EPARSE without it.
 */
int	gpufacts_release(json_t **out, const char *s, size_t len,
	    struct err *err);
/* A CUDA version.json: "12.4.1" of {"cuda": {"version": "12.4.1"}}. */
int	gpufacts_version_json(char **out, const char *s, size_t len,
	    struct err *err);
/*
 * The version in a wheel's dist-info directory name, when it is the
 * project prefix (e.g. "nvidia_cuda_nvcc") with an optional "_cuNN":
 * "nvidia_cuda_nvcc-13.0.88.dist-info" -> "13.0.88".  NULL otherwise.
 */
char	*gpufacts_distinfo_version(const char *name, const char *prefix);
/*
 * Looks for "NCCL version X.Y.Z" in a window of a library's bytes:
 * returns the version (caller frees) or NULL.  *keep says how many bytes
 * at the end of the window the caller must keep for the next one, so
 * that a string across two reads is found.
 */
char	*gpufacts_nccl_scan(const char *s, size_t len, size_t *keep);

#endif
