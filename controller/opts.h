/*
 * opts.h - one option table drives parsing and --help (git parse-options).
 *
 * A command declares a struct opt array ending in ENVCTL_OPT_END; opts_parse
 * fills the values it points at and leaves the operands.  "--" ends
 * options; "-jN", "-j N", "--forks=N" and "--forks N" all work; options and
 * operands may be mixed.  Errors are ENVCTL_EUSAGE with a message naming the
 * option.  The table is read-only; values belong to the caller.
 */
#ifndef ENVCTL_CONTROLLER_OPTS_H
#define ENVCTL_CONTROLLER_OPTS_H

struct buf;
struct err;

enum opt_type {
	ENVCTL_OPT_END,
	ENVCTL_OPT_FLAG,	/* int *: set to 1 */
	ENVCTL_OPT_STRING,	/* const char **: points into argv */
	ENVCTL_OPT_INT,		/* int *: decimal, range checked */
	ENVCTL_OPT_COUNT,	/* int *: incremented, e.g. -v -v */
};

struct opt {
	int		 short_name;	/* 0 when none */
	const char	*long_name;	/* NULL when none */
	enum opt_type	 type;
	void		*value;
	const char	*argname;	/* for --help: "FILE", "N" */
	const char	*help;
	int		 min, max;	/* ENVCTL_OPT_INT range */
};

#define ENVCTL_OPT_END_ENTRY { 0, NULL, ENVCTL_OPT_END, NULL, NULL, NULL, 0, 0 }

/*
 * Parses argv[first..argc) against opts.  Operands are collected, in order,
 * into operands (caller-allocated, room for argc entries); *noperands gets
 * their count.  Returns 0, 1 when --help was given, or ENVCTL_EUSAGE.
 */
int	opts_parse(const struct opt *opts, int argc, char **argv, int first,
	    char **operands, int *noperands, struct err *err);
/* Appends the usage line(s) and one line per option, aligned. */
void	opts_usage(struct buf *out, const char *const *usage,
	    const struct opt *opts);

#endif
