/*
 * fuzz_playbook.c - playbooks, then one host's values and file.
 *
 * The input is a playbook's YAML, written to PB in a private directory
 * that also holds the template t.tmpl; it goes through playbook_load()
 * and, when it loads, desired_render() for one inventory host whose
 * variables include a secret, over the broken seed's text as the current
 * file.  Inputs whose 'template' names another file are left out: they
 * would read the filesystem.
 *
 * Properties: a load or a render fails only with the codes their headers
 * name, and its errors format one per line, printable, as many lines as
 * errors; a loaded playbook keeps the rules it was checked against (name
 * characters, identifiers, an absolute path or none, a template exactly
 * in mode: file); every value is expanded, in playbook order; the host's
 * secret variable's value never shows in an error unless the input
 * itself holds it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/desired.h"
#include "controller/inventory.h"
#include "controller/playbook.h"
#include "controller/pylit.h"
#include "controller/yamldoc.h"
#include "tests/fuzz/fuzz.h"

#define SECRET	"s3cr3t-4c7d"

static const char inventory_text[] =
    "all:\n"
    "  vars:\n"
    "    cuda: \"13.0\"\n"
    "  hosts:\n"
    "    gpu-01:\n"
    "      ansible_host: 127.0.0.1\n"
    "      token: " SECRET "\n"
    "      nccl_proto: LL\n";

static const char template_text[] =
    "# a template\n"
    "{{ envctl_env }}\n"
    "print('after')\n";

static const char current_text[] =
    "import os as _os\n"
    "for _k, _v in [(\"NCCL_PROTO\", \"LL\")]:\n"
    "    if _k not in _os.environ:\n"
    "        _os.environ[_k] = ...\n";

static char *dir, *pb_path, *tmpl_path;
static struct inventory *inv;

static void
cleanup(void)
{
	unlink(pb_path);
	unlink(tmpl_path);
	rmdir(dir);
	inventory_free(inv);
}

static void
write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	FUZZ_ASSERT(f != NULL);
	FUZZ_ASSERT(fwrite(data, 1, len, f) == len || len == 0);
	FUZZ_ASSERT(fclose(f) == 0);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct err err = ENVCTL_ERR_INIT;
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	dir = xasprintf("%s/envctl-fuzz-playbook.XXXXXX",
	    tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
	FUZZ_ASSERT(mkdtemp(dir) != NULL);
	pb_path = xasprintf("%s/pb.yaml", dir);
	tmpl_path = xasprintf("%s/t.tmpl", dir);
	write_file(tmpl_path, template_text, sizeof(template_text) - 1);
	atexit(cleanup);
	FUZZ_ASSERT(inventory_load_string(&inv, inventory_text,
	    sizeof(inventory_text) - 1, "fuzz.yaml", &err) == 0);
	err_release(&err);
	return 0;
}

/* 1 when the input's 'template' is missing or names t.tmpl. */
static int
template_is_ours(const uint8_t *data, size_t size)
{
	struct err err = ENVCTL_ERR_INIT;
	struct ydoc *doc = NULL;
	const struct ynode *t = NULL;
	int ok = 1;

	if (ydoc_load_string(&doc, (const char *)data, size, "pb",
	    &err) == 0 && doc->root != NULL &&
	    doc->root->type == ENVCTL_YMAP)
		t = ymap_get(doc->root, "template");
	if (t != NULL)
		ok = t->type == ENVCTL_YSCALAR && (strcmp(t->str, "t.tmpl") ==
		    0 || strcmp(t->str, tmpl_path) == 0);
	ydoc_free(doc);
	err_release(&err);
	return ok;
}

static void
check_loaded(const struct playbook *pb)
{
	size_t i;

	FUZZ_ASSERT(pb->name[0] != '\0' && strspn(pb->name,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_.-") == strlen(pb->name));
	FUZZ_ASSERT(pb->interpreter != NULL);
	FUZZ_ASSERT(pb->target == NULL || pb->target[0] == '/');
	FUZZ_ASSERT(pb->mode == ENVCTL_MODE_BLOCK ||
	    pb->mode == ENVCTL_MODE_FILE);
	FUZZ_ASSERT((pb->mode == ENVCTL_MODE_FILE) ==
	    (pb->template_path != NULL));
	FUZZ_ASSERT(pb->backup_dir != NULL && pb->backup_keep >= 0);
	for (i = 0; i < pb->nenv; i++) {
		FUZZ_ASSERT(pylit_is_identifier(pb->env[i].name));
		FUZZ_ASSERT(pb->env[i].value != NULL &&
		    pb->env[i].value->type == ENVCTL_YSCALAR);
		FUZZ_ASSERT(pb->env[i].comment == NULL ||
		    strpbrk(pb->env[i].comment, "\r\n") == NULL);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb = NULL;
	struct desired d;
	int r, secret_ok;
	size_t i;

	if (!template_is_ours(data, size))
		return 0;
	secret_ok = 0;
	for (i = 0; !secret_ok && i + sizeof(SECRET) - 1 <= size; i++)
		secret_ok = memcmp(data + i, SECRET, sizeof(SECRET) - 1) == 0;
	write_file(pb_path, data, size);
	r = playbook_load(&pb, pb_path, &err);
	if (r != 0) {
		FUZZ_ASSERT(pb == NULL);
		FUZZ_ASSERT(r == ENVCTL_EINVALID || r == ENVCTL_EPARSE ||
		    r == ENVCTL_EUNSUPPORTED || r == ENVCTL_ETOOBIG);
		fuzz_check_errors(&err, secret_ok ? NULL : SECRET);
		err_release(&err);
		return 0;
	}
	check_loaded(pb);
	memset(&d, 0, sizeof(d));
	r = desired_render(&d, pb, inventory_host(inv, 0), current_text,
	    sizeof(current_text) - 1, "current", &err);
	if (r != 0) {
		FUZZ_ASSERT(r == ENVCTL_EUNDEFINED || r == ENVCTL_EINVALID ||
		    r == ENVCTL_EPARSE || r == ENVCTL_EUNSUPPORTED ||
		    r == ENVCTL_ETOOBIG);
		fuzz_check_errors(&err, secret_ok ? NULL : SECRET);
	} else {
		FUZZ_ASSERT(d.nvars == pb->nenv);
		for (i = 0; i < d.nvars; i++) {
			FUZZ_ASSERT(strcmp(d.vars[i].name,
			    pb->env[i].name) == 0);
			FUZZ_ASSERT(d.vars[i].value != NULL);
			FUZZ_ASSERT(d.vars[i].secret == pb->env[i].secret);
		}
		FUZZ_ASSERT(d.content.len > 0);
	}
	desired_release(&d);
	err_release(&err);
	playbook_free(pb);
	return 0;
}
