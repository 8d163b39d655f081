/*
 * pyvalue.h - Python literals as ast.literal_eval() reads them, and values
 * as Python's str() and repr() print them.
 *
 * Ansible passes an INI inventory's inline host variables through
 * ast.literal_eval(), and turns a template's result that looks like a list,
 * dict or boolean back into one the same way; envctl must read both
 * exactly.  Parsed values are ynodes built in the caller's ydoc (see
 * ydoc_new()): strings, ints (any size, canonical decimal), floats, bools,
 * None as null, lists and tuples as sequences, dicts as mappings.  A
 * literal no ynode can stand for (complex, set, Ellipsis, bytes that are
 * not UTF-8) is refused by name.  Pure functions; thread-safe.
 */
#ifndef ENVCTL_CONTROLLER_PYVALUE_H
#define ENVCTL_CONTROLLER_PYVALUE_H

#include <stddef.h>

struct buf;
struct err;
struct ydoc;
struct ynode;

/*
 * Reads s (len bytes) as ast.literal_eval(s) would into *out, its nodes
 * made in doc at line:col.  ENVCTL_EPARSE when Python would raise
 * ValueError or SyntaxError (Ansible then keeps the text as a string),
 * ENVCTL_EINVALID when it would raise TypeError (an unhashable dict key:
 * Ansible does not catch it, so the source fails), ENVCTL_EUNSUPPORTED
 * for a literal envctl cannot represent (message names it), ENVCTL_ETOOBIG
 * from 200 levels of nesting or 1000 chained signs.
 */
int	pyvalue_parse(struct ydoc *doc, const char *s, size_t len, int line,
	    int col, struct ynode **out, struct err *err);
/*
 * Appends str(v) (pyvalue_repr: repr(v)) of the Python value Ansible holds
 * for node v: strings as they are (quoted by repr), ints, floats as
 * Python's repr, True/False, None, lists as "['a', 1]", mappings as
 * "{'a': 1}".  ENVCTL_ETOOBIG past out's cap (out left as it was).
 */
int	pyvalue_str(struct buf *out, const struct ynode *v, struct err *err);
int	pyvalue_repr(struct buf *out, const struct ynode *v, struct err *err);

#endif
