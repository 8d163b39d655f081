/*
 * yamldoc.h - a YAML file as a tree of nodes with positions (libyaml).
 *
 * One document per file.  Anchors and aliases are resolved (an alias shares
 * the anchored node; a recursive alias is an error), and `<<` merge keys are
 * flattened with PyYAML's rules, so consumers see plain mappings.  Duplicate
 * keys in one mapping are an error.  Scalars keep their text; their YAML 1.1
 * type (as PyYAML, and so Ansible, resolves it) is computed on demand.
 * Every node belongs to its struct ydoc and lives until ydoc_free().
 */
#ifndef ENVCTL_CONTROLLER_YAMLDOC_H
#define ENVCTL_CONTROLLER_YAMLDOC_H

#include <stddef.h>

struct buf;
struct err;

enum ynode_type {
	ENVCTL_YSCALAR,
	ENVCTL_YSEQ,
	ENVCTL_YMAP,
};

enum yscalar_kind {
	ENVCTL_YSTR,
	ENVCTL_YINT,
	ENVCTL_YFLOAT,
	ENVCTL_YBOOL,
	ENVCTL_YNULL,
};

struct ypair {
	struct ynode	*key;
	struct ynode	*value;
};

struct ynode {
	enum ynode_type	 type;
	const char	*path;		/* the file, for messages (borrowed) */
	int		 line;		/* 1-based position of the node */
	int		 col;
	/* ENVCTL_YSCALAR */
	char		*str;		/* NUL-terminated; may hold NULs */
	size_t		 len;
	int		 plain;		/* untagged plain or "!": resolved */
	char		*tag;		/* explicit tag, or NULL */
	/* ENVCTL_YSEQ */
	struct ynode	**items;
	size_t		 nitems;
	/* ENVCTL_YMAP, merge keys already applied */
	struct ypair	*pairs;
	size_t		 npairs;
	/* private */
	size_t		 alloc;
	size_t		 weight;	/* nodes after alias expansion */
	int		 open;
};

struct ydoc {
	char		*path;
	struct ynode	*root;		/* NULL for an empty file */
	struct ynode	**all;		/* every node, for ydoc_free() */
	size_t		 nall;
	size_t		 allocall;
};

/*
 * Largest YAML file read, most nodes after alias expansion, and most
 * levels of nesting (no inventory or playbook needs more; the cap keeps
 * loading linear in the input).
 */
#define ENVCTL_YAML_MAX_BYTES	(16u * 1024 * 1024)
#define ENVCTL_YAML_MAX_NODES	2000000u
#define ENVCTL_YAML_MAX_DEPTH	1000u

/*
 * Parses the file at path into *out (caller frees with ydoc_free).
 * Errors: ENVCTL_ENOTFOUND, ENVCTL_ESYS, ENVCTL_ETOOBIG (size, nodes,
 * nesting), ENVCTL_EPARSE with
 * path:line:col and libyaml's problem, ENVCTL_EINVALID for duplicate keys.
 */
int	ydoc_load_file(struct ydoc **out, const char *path, struct err *err);
/* As ydoc_load_file on a buffer; label names it in messages. */
int	ydoc_load_string(struct ydoc **out, const char *text, size_t len,
	    const char *label, struct err *err);
void	ydoc_free(struct ydoc *doc);

/*
 * Documents built by hand (INI and JSON inventories, values read from
 * them): ydoc_new() makes an empty one named path (copied); the add
 * functions make nodes it owns, positioned at line:col (0 when unknown).
 * A scalar gets the explicit tag of its kind, so it keeps that type; its
 * text must be the kind's canonical form (decimal ints, "True"/"False",
 * Python's repr of floats).  Containers are filled with yseq_append() and
 * ymap_append(), which do not check for duplicate keys.
 */
struct ydoc *ydoc_new(const char *path);
/*
 * The tag of a scalar that stands for a value envctl cannot use (a Python
 * set in an INI inventory...): its text says why, and every use of it is
 * refused with that reason.
 */
#define ENVCTL_YTAG_UNUSABLE	"!envctl-unusable"

struct ynode *ydoc_add_scalar(struct ydoc *doc, enum yscalar_kind kind,
	    const char *s, size_t len, int line, int col);
struct ynode *ydoc_add_node(struct ydoc *doc, enum ynode_type type,
	    int line, int col);
void	yseq_append(struct ynode *seq, struct ynode *item);
void	ymap_append(struct ynode *map, struct ynode *key, struct ynode *value);

/* Returns the value for key in map, or NULL (also when map is no mapping). */
const struct ynode *ymap_get(const struct ynode *map, const char *key);
/* The YAML 1.1 type of a scalar, as PyYAML resolves it. */
enum yscalar_kind yscalar_kind(const struct ynode *n);
/*
 * Appends the scalar's value as Ansible's templating prints it: strings as
 * they are, ints in decimal, booleans True/False, null None, floats as
 * Python's repr.  ENVCTL_EINVALID for a non-scalar or an int out of range,
 * ENVCTL_ETOOBIG past out's cap (out is then left as it was).
 */
int	yscalar_text(struct buf *out, const struct ynode *n, struct err *err);
/*
 * Appends Python's repr() of d: the shortest digits that read back as d
 * ("1.0", "1e+16", "1.5e-05", "inf", "nan", "-0.0").  ENVCTL_ETOOBIG
 * past out's cap.
 */
int	yfloat_repr(struct buf *out, double d);
/* Reads a YAML 1.1 boolean into *out; ENVCTL_EINVALID when n is none. */
int	yscalar_bool(const struct ynode *n, int *out);
/* Reads a YAML 1.1 integer into *out; ENVCTL_EINVALID when n is none. */
int	yscalar_int(const struct ynode *n, long long *out);
/* 1 when n is absent or a null scalar, else 0. */
int	ynode_is_null(const struct ynode *n);
/* 1 when n is a scalar of string type, else 0. */
int	ynode_is_string(const struct ynode *n);
/* Describes n for messages: "a mapping", "a string", "an integer"... */
const char *ynode_describe(const struct ynode *n);

#endif
