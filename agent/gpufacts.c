/* gpufacts.c - GPU facts' texts taken apart (see gpufacts.h). */
#include "gpufacts.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"

#define MAX_GPUS	256	/* rows of a query or a matrix */
#define WORD_MAX	64	/* bytes of one matrix cell */
#define NCCL_TAG	"NCCL version "
#define NCCL_VER_MAX	32

/* One line of s: [*p, *end) without its newline; 0 at the end. */
static int
next_line(const char **p, const char *s_end, const char **line,
    const char **end)
{
	const char *nl;

	if (*p >= s_end)
		return 0;
	*line = *p;
	if ((nl = memchr(*p, '\n', (size_t)(s_end - *p))) == NULL)
		nl = s_end;
	*end = nl;
	if (*end > *line && (*end)[-1] == '\r')
		(*end)--;
	*p = nl < s_end ? nl + 1 : s_end;
	return 1;
}

static const char *
skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Length of the word at p (up to a blank). */
static size_t
word_len(const char *p, const char *end)
{
	const char *q = p;

	while (q < end && *q != ' ' && *q != '\t')
		q++;
	return (size_t)(q - p);
}

/* 1 when [p, p+n) is digits with at least one dot, not at either end. */
static int
is_version(const char *p, size_t n)
{
	size_t i, dots = 0;

	if (n == 0 || !isdigit((unsigned char)p[0]) ||
	    !isdigit((unsigned char)p[n - 1]))
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] == '.')
			dots++;
		else if (!isdigit((unsigned char)p[i]))
			return 0;
	}
	return dots > 0;
}

static const char *
find(const char *p, const char *end, const char *needle)
{
	size_t n = strlen(needle);

	for (; p + n <= end; p++)
		if (memcmp(p, needle, n) == 0)
			return p;
	return NULL;
}

int
gpufacts_driver(json_t **out, const char *s, size_t len, struct err *err)
{
	const char *p = s, *end = s + len, *line, *le, *w;
	size_t n;
	int lineno = 0;

	*out = NULL;
	while (next_line(&p, end, &line, &le)) {
		lineno++;
		if ((size_t)(le - line) < 13 ||
		    memcmp(line, "NVRM version:", 13) != 0)
			continue;
		for (w = line + 13; w < le; w += n) {
			w = skip_blank(w, le);
			n = word_len(w, le);
			if (is_version(w, n))
				break;
		}
		if (w >= le)
			return err_set(err, ENVCTL_EPARSE, "line %d: no "
			    "version in the NVRM line", lineno);
		*out = json_pack("{s:o,s:s}", "version", proto_text(w, n),
		    "flavor", find(line, le, "Open Kernel") != NULL ?
		    "open" : "proprietary");
		return 0;
	}
	return err_set(err, ENVCTL_EPARSE, "no 'NVRM version:' line");
}

/* The value after label on [line, le): a version, or NULL for N/A. */
static json_t *
label_value(const char *line, const char *le, const char *label, int *found)
{
	const char *p = find(line, le, label);
	size_t n;

	*found = 0;
	if (p == NULL)
		return NULL;
	p = skip_blank(p + strlen(label), le);
	n = word_len(p, le);
	if (is_version(p, n)) {
		*found = 1;
		return proto_text(p, n);
	}
	if (n >= 3 && memcmp(p, "N/A", 3) == 0)
		*found = 1;
	return NULL;
}

int
gpufacts_smi_header(json_t **out, const char *s, size_t len,
    struct err *err)
{
	static const char *const drv[] = { "Driver Version:", "KMD Version:",
	    NULL };
	static const char *const cuda[] = { "CUDA Version:",
	    "CUDA Driver Version:", "CUDA UMD Version:", NULL };
	const char *p = s, *end = s + len, *line, *le;
	json_t *d, *c;
	int i, f;

	*out = NULL;
	while (next_line(&p, end, &line, &le)) {
		d = NULL;
		for (i = 0; drv[i] != NULL && d == NULL; i++)
			if ((d = label_value(line, le, drv[i], &f)) == NULL &&
			    f)
				break;
		if (d == NULL)
			continue;
		c = NULL;
		for (i = 0; cuda[i] != NULL; i++)
			if ((c = label_value(line, le, cuda[i], &f)) != NULL ||
			    f)
				break;
		*out = json_pack("{s:o,s:o}", "driver", d, "cuda",
		    c != NULL ? c : json_null());
		return 0;
	}
	return err_set(err, ENVCTL_EPARSE, "nvidia-smi printed no header "
	    "with a driver version");
}

/* Field i of a CSV line split at commas, blanks around trimmed. */
static int
csv_fields(const char *line, const char *le, const char **f, size_t *fl,
    int max)
{
	const char *p = line, *c, *a, *b;
	int n = 0;

	while (n < max) {
		if ((c = memchr(p, ',', (size_t)(le - p))) == NULL)
			c = le;
		a = skip_blank(p, c);
		b = c;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		f[n] = a;
		fl[n++] = (size_t)(b - a);
		if (c == le)
			return n;
		p = c + 1;
	}
	return max + 1;
}

static int
na(const char *p, size_t n)
{
	return (n == 5 && memcmp(p, "[N/A]", 5) == 0) ||
	    (n == 3 && memcmp(p, "N/A", 3) == 0);
}

int
gpufacts_smi_query(json_t **out, const char *s, size_t len,
    struct err *err)
{
	const char *p = s, *end = s + len, *line, *le, *f[6];
	size_t fl[6], i;
	json_t *a = json_array(), *cc, *mem;
	char buf[32], *e;
	long long v;
	int lineno = 0, n;

	*out = NULL;
	while (next_line(&p, end, &line, &le)) {
		lineno++;
		if (skip_blank(line, le) == le)
			continue;
		if (json_array_size(a) >= MAX_GPUS)
			goto bad;
		if ((n = csv_fields(line, le, f, fl, 5)) != 5)
			goto bad;
		/* Names run long: "NVIDIA RTX PRO 6000 Blackwell Workstation
		 * Edition" is 50 bytes; only index and memory go through buf. */
		for (i = 0; i < 5; i++)
			if (fl[i] == 0 || fl[i] > 256 || ((i == 0 || i == 4) &&
			    fl[i] >= sizeof(buf)))
				goto bad;
		memcpy(buf, f[0], fl[0]);
		buf[fl[0]] = '\0';
		v = strtoll(buf, &e, 10);
		if (*e != '\0' || !isdigit((unsigned char)buf[0]) || v > 4096)
			goto bad;
		if (na(f[2], fl[2]))
			cc = json_null();
		else if (is_version(f[2], fl[2]))
			cc = proto_text(f[2], fl[2]);
		else
			goto bad;
		if (na(f[4], fl[4]))
			mem = json_null();
		else {
			memcpy(buf, f[4], fl[4]);
			buf[fl[4]] = '\0';
			if (!isdigit((unsigned char)buf[0])) {
				json_decref(cc);
				goto bad;
			}
			mem = json_integer(strtoll(buf, &e, 10));
			if (*e != '\0' && strcmp(e, " MiB") != 0) {
				json_decref(cc);
				json_decref(mem);
				goto bad;
			}
		}
		json_array_append_new(a, json_pack("{s:I,s:o,s:o,s:o,s:o}",
		    "index", (json_int_t)v, "name", proto_text(f[1], fl[1]),
		    "compute_cap", cc, "bus_id", proto_text(f[3], fl[3]),
		    "memory_mib", mem));
	}
	*out = a;
	return 0;
bad:
	json_decref(a);
	return err_set(err, ENVCTL_EPARSE, "nvidia-smi --query-gpu: line %d "
	    "is not 'index, name, compute_cap, pci.bus_id, memory.total'",
	    lineno);
}

static const char *const levels[] = { "LOC", "NVL", "NVB", "PIX", "PXB",
	"PXN", "PHB", "SYS", NULL };

int
gpufacts_level_rank(const char *level)
{
	int i;

	for (i = 0; levels[i] != NULL; i++)
		if (strcmp(levels[i], level) == 0)
			return i;
	return -1;
}

/* NCCL's level of one matrix cell, or NULL when it is none of them. */
static const char *
cell_level(const char *w)
{
	size_t i;

	if (strncmp(w, "NV", 2) == 0 && w[2] != '\0') {
		for (i = 2; w[i] != '\0'; i++)
			if (!isdigit((unsigned char)w[i]))
				return NULL;
		return "NVL";
	}
	if (strcmp(w, "PIX") == 0 || strcmp(w, "PXB") == 0 ||
	    strcmp(w, "PHB") == 0 || strcmp(w, "SYS") == 0)
		return w;
	if (strcmp(w, "NODE") == 0)
		return "PHB";
	if (strcmp(w, "SOC") == 0)
		return "SYS";
	return NULL;
}

/* 1 when [p, p+n) is "GPU" and digits. */
static int
gpu_label(const char *p, size_t n, long *idx)
{
	size_t i;

	if (n < 4 || n > 7 || memcmp(p, "GPU", 3) != 0)
		return 0;
	*idx = 0;
	for (i = 3; i < n; i++) {
		if (!isdigit((unsigned char)p[i]))
			return 0;
		*idx = *idx * 10 + (p[i] - '0');
	}
	return 1;
}

int
gpufacts_topo(json_t **out, const char *s, size_t len, struct err *err)
{
	const char *p = s, *end = s + len, *line, *le, *w;
	char cell[WORD_MAX];
	json_t *pairs = json_array();
	const char *lv;
	long ngpu = -1, row = 0, idx, col;
	size_t n;
	int lineno = 0, nvlink = 0, worst = -1, rank;

	*out = NULL;
	while (next_line(&p, end, &line, &le)) {
		lineno++;
		w = skip_blank(line, le);
		if (w == le) {
			if (ngpu >= 0 && row > 0)
				break;
			continue;
		}
		n = word_len(w, le);
		if (ngpu < 0) {
			/* The header: GPU0 .. GPUn-1 first, in order. */
			for (ngpu = 0; w < le && gpu_label(w, n, &idx) &&
			    idx == ngpu; ngpu++) {
				w = skip_blank(w + n, le);
				n = word_len(w, le);
			}
			if (ngpu == 0 || ngpu > MAX_GPUS)
				goto bad;
			continue;
		}
		if (!gpu_label(w, n, &idx))
			break;	/* NIC rows, the legend */
		if (idx != row)
			goto bad;
		for (col = 0; col < ngpu; col++) {
			w = skip_blank(w + n, le);
			n = word_len(w, le);
			if (n == 0 || n >= sizeof(cell))
				goto bad;
			memcpy(cell, w, n);
			cell[n] = '\0';
			if (col == row) {
				if (strcmp(cell, "X") != 0)
					goto bad;
				continue;
			}
			if ((lv = cell_level(cell)) == NULL)
				goto bad;
			if (col < row)
				continue;
			rank = gpufacts_level_rank(lv);
			if (strcmp(lv, "NVL") == 0)
				nvlink = 1;
			else if (rank > worst)
				worst = rank;
			json_array_append_new(pairs, json_pack(
			    "{s:i,s:i,s:s,s:s}", "a", (int)row, "b", (int)col,
			    "link", cell, "level", lv));
		}
		row++;
	}
	if (ngpu < 0)
		goto bad;
	if (row != ngpu) {
		lineno++;
		goto bad;
	}
	*out = json_pack("{s:i,s:o,s:b,s:o}", "gpus", (int)ngpu, "pairs",
	    pairs, "nvlink", nvlink, "worst_pcie", worst >= 0 ?
	    json_string(levels[worst]) : json_null());
	return 0;
bad:
	json_decref(pairs);
	if (ngpu <= 0)
		return err_set(err, ENVCTL_EPARSE, "nvidia-smi topo -m: no "
		    "'GPU0 GPU1 ...' header");
	return err_set(err, ENVCTL_EPARSE, "nvidia-smi topo -m: line %d is "
	    "not row GPU%ld of the %ld-GPU matrix", lineno, row, ngpu);
}

json_t *
gpufacts_iommu(const char *s, size_t len)
{
	static const char *const keys[] = { "intel_iommu", "amd_iommu",
	    "iommu", "iommu.passthrough", "iommu.strict", NULL };
	const char *p = s, *end = s + len, *w, *eq, *v;
	json_t *args = json_object();
	const char *mode = "default";
	size_t n, k;
	int off = 0, pt = 0, on = 0, i;

	while (end > s && (end[-1] == '\n' || end[-1] == '\0'))
		end--;
	for (w = skip_blank(p, end); w < end; w = skip_blank(w + n, end)) {
		n = word_len(w, end);
		if ((eq = memchr(w, '=', n)) == NULL)
			continue;
		k = (size_t)(eq - w);
		for (i = 0; keys[i] != NULL; i++)
			if (strlen(keys[i]) == k && memcmp(w, keys[i], k) == 0)
				break;
		if (keys[i] == NULL)
			continue;
		json_object_set_new(args, keys[i], proto_text(eq + 1,
		    (size_t)(w + n - eq - 1)));
	}
	/* What each setting means once all are read, the last one winning. */
	for (i = 0; keys[i] != NULL; i++) {
		if ((v = json_string_value(json_object_get(args,
		    keys[i]))) == NULL)
			continue;
		if (i == 3) {
			if (strcmp(v, "1") == 0 || strcmp(v, "y") == 0 ||
			    strcmp(v, "on") == 0)
				pt = 1;
			else
				on = 1;
		} else if (i <= 2) {
			if (strstr(v, "off") != NULL)
				off = 1;
			else if (strcmp(v, "pt") == 0)
				pt = 1;
			else if (strstr(v, "on") != NULL ||
			    strcmp(v, "force") == 0 || strcmp(v, "nopt") == 0)
				on = 1;
		}
	}
	if (off)
		mode = "off";
	else if (pt)
		mode = "passthrough";
	else if (on)
		mode = "on";
	return json_pack("{s:s,s:o}", "mode", mode, "args", args);
}

int
gpufacts_release(json_t **out, const char *s, size_t len, struct err *err)
{
	const char *end = s + len, *p = find(s, end, "release "), *v;
	size_t n;

	*out = NULL;
	if (p == NULL)
		return err_set(err, ENVCTL_EPARSE, "no 'release X.Y' in the "
		    "--version output");
	p += 8;
	n = 0;
	while (p + n < end && (isdigit((unsigned char)p[n]) || p[n] == '.'))
		n++;
	if (!is_version(p, n))
		return err_set(err, ENVCTL_EPARSE, "no 'release X.Y' in the "
		    "--version output");
	v = find(p + n, end, ", V");
	*out = json_pack("{s:o,s:o}", "version", proto_text(p, n), "full",
	    json_null());
	if (v != NULL) {
		v += 3;
		for (n = 0; v + n < end && (isdigit((unsigned char)v[n]) ||
		    v[n] == '.'); n++)
			;
		if (is_version(v, n))
			json_object_set_new(*out, "full", proto_text(v, n));
	}
	return 0;
}

int
gpufacts_version_json(char **out, const char *s, size_t len,
    struct err *err)
{
	json_error_t jerr;
	json_t *o;
	const char *v;

	*out = NULL;
	if ((o = json_loadb(s, len, 0, &jerr)) == NULL)
		return err_set(err, ENVCTL_EPARSE, "version.json:%d:%d: %s",
		    jerr.line, jerr.column, jerr.text);
	v = json_string_value(json_object_get(json_object_get(o, "cuda"),
	    "version"));
	if (v == NULL || !is_version(v, strlen(v))) {
		json_decref(o);
		return err_set(err, ENVCTL_EPARSE, "version.json has no "
		    "cuda.version");
	}
	*out = xstrdup(v);
	json_decref(o);
	return 0;
}

char *
gpufacts_distinfo_version(const char *name, const char *prefix)
{
	size_t k = strlen(prefix), n = strlen(name), sfx = 10;
	const char *p;

	if (strncmp(name, prefix, k) != 0 || n <= k + sfx ||
	    strcmp(name + n - sfx, ".dist-info") != 0)
		return NULL;
	p = name + k;
	if (strncmp(p, "_cu", 3) == 0) {
		for (p += 3; isdigit((unsigned char)*p); p++)
			;
	}
	if (*p != '-')
		return NULL;
	p++;
	if (!is_version(p, (size_t)(name + n - sfx - p)))
		return NULL;
	return xstrndup(p, (size_t)(name + n - sfx - p));
}

char *
gpufacts_nccl_scan(const char *s, size_t len, size_t *keep)
{
	size_t tag = sizeof(NCCL_TAG) - 1, i, n;
	const char *p;

	*keep = len < tag + NCCL_VER_MAX ? len : tag + NCCL_VER_MAX;
	for (i = 0; i + tag <= len; i++) {
		if (s[i] != 'N' || memcmp(s + i, NCCL_TAG, tag) != 0)
			continue;
		p = s + i + tag;
		for (n = 0; i + tag + n < len && n < NCCL_VER_MAX &&
		    (isdigit((unsigned char)p[n]) || p[n] == '.'); n++)
			;
		if (i + tag + n == len && n < NCCL_VER_MAX) {
			/* May go on in the next window. */
			*keep = len - i;
			return NULL;
		}
		while (n > 0 && p[n - 1] == '.')
			n--;
		if (is_version(p, n))
			return xstrndup(p, n);
	}
	return NULL;
}
