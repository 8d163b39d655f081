/*
 * output.h - the only place envctl prints.
 *
 * Results go to stdout, diagnostics and errors to stderr, each call written
 * whole (one write per call, so blocks from parallel hosts never
 * interleave).  Errors print compiler style, one line each, as err_format()
 * makes them.  Not buffered: nothing is lost when envctl exits.
 */
#ifndef ENVCTL_CONTROLLER_OUTPUT_H
#define ENVCTL_CONTROLLER_OUTPUT_H

#include <jansson.h>
#include <stddef.h>

struct err;

/* Writes len bytes to stdout, whole; 0 or ENVCTL_ESYS (e.g. EPIPE). */
int	out_write(const char *data, size_t len);
/* Formats to stdout. */
void	out_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a --json document to stdout, indented, and releases it. */
void	out_json(json_t *doc);
/* Formats to stderr. */
void	out_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints every error of the chain to stderr, one line each. */
void	out_errors(const struct err *err);
/* As out_errors, one line per problem however many hosts share it. */
void	out_errors_grouped(const struct err *err);

#endif
