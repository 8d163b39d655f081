/*
 * unitsyntax.h - the syntax of systemd's unit files and environment
 * files, as pure functions of their text.
 *
 * The words of a directive's value as systemd.syntax(7) "QUOTING" splits
 * them, the variable names Environment= accepts, UTF-8 as systemd checks
 * it, the unit name unescaping of the %P, %I and %J specifiers, and an
 * EnvironmentFile= file parsed as systemd's env-file.c parses it.  No file
 * system, no unit: unitenv reads the files and applies what these return.
 * The rules and the man pages they come from: docs/worker-env.md.  What is
 * returned is the caller's to free.
 */
#ifndef ENVCTL_AGENT_UNITSYNTAX_H
#define ENVCTL_AGENT_UNITSYNTAX_H

#include <stddef.h>

struct buf;

#define UNITSYNTAX_WS	" \t\n\r"	/* systemd's WHITESPACE */

/*
 * The next word of *p into w (reset first), unquoted and unescaped as
 * systemd's extract_first_word(EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE) does:
 * quotes may open anywhere in a word, as in a shell; the C-style escapes
 * of systemd.syntax(7)'s table, \u and \U written as UTF-8.  Returns 1 and
 * moves *p past the word, 0 at the end, -1 on an escape systemd does not
 * know (or one that makes a NUL) or an unbalanced quote.
 */
int	unitsyntax_word(const char **p, struct buf *w);
/*
 * 1 when the n bytes at s are a variable name Environment= accepts
 * (systemd.exec(5)): ASCII letters, digits and "_", not starting with a
 * digit, not empty.
 */
int	unitsyntax_env_name(const char *s, size_t n);
/* 1 when the n bytes at s are valid UTF-8 and hold no NUL. */
int	unitsyntax_utf8(const char *s, size_t n);
/*
 * Appends s unescaped as systemd unescapes unit names to out: "-" is "/",
 * "\xNN" the byte NN.  -1 on another escape or "\x00" (out then holds
 * what came before it).
 */
int	unitsyntax_unescape(struct buf *out, const char *s);

/* One assignment of an environment file, and the line its key is on. */
struct unitsyntax_pair {
	char	*key;
	char	*value;
	int	 line;
};

/*
 * Parses the environment file text as systemd's env-file.c does (the
 * rules of systemd.exec(5), "EnvironmentFile="): "#" and ";" start a
 * comment only before a key; "KEY = value" loses the blanks around "=";
 * unquoted values keep inner blanks and lose trailing ones, "\" keeps the
 * next character and eats a newline; '...' is verbatim; "..." unescapes
 * only \" \\ \` \$ and a newline.  A line without "=" is skipped.  Reading
 * stops at a NUL byte, as systemd's loop does.  Keys are not checked.
 * Appends the assignments to *v (*n of them); free with
 * unitsyntax_pairs_free().
 */
void	unitsyntax_envfile(struct unitsyntax_pair **v, size_t *n,
	    const char *text);
void	unitsyntax_pairs_free(struct unitsyntax_pair *v, size_t n);

#endif
