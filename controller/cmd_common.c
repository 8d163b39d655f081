/* cmd_common.c - what every subcommand shares (see cmd.h). */
#include "cmd.h"

#include "common/buf.h"
#include "common/err.h"
#include "controller/opts.h"
#include "controller/output.h"

int
cmd_parse(const char *const *usage, const struct opt *opts, int argc,
    char **argv, char **operands, int *noperands, int min_operands,
    int max_operands, int *exitcode)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	int r;

	r = opts_parse(opts, argc, argv, 1, operands, noperands, &err);
	if (r == 1) {
		opts_usage(&b, usage, opts);
		out_write(b.data, b.len);
		buf_release(&b);
		*exitcode = ENVCTL_EXIT_OK;
		return 0;
	}
	if (r == 0 && *noperands < min_operands)
		err_set(&err, ENVCTL_EUSAGE, "missing operand");
	else if (r == 0 && *noperands > max_operands)
		err_set(&err, ENVCTL_EUSAGE, "unexpected operand '%s'",
		    operands[max_operands]);
	if (err.code != 0) {
		out_note("envctl %s: %s\n", argv[0], err.msg);
		opts_usage(&b, usage, opts);
		out_note("%s", b.data);
		buf_release(&b);
		err_release(&err);
		*exitcode = ENVCTL_EXIT_USAGE;
		return 0;
	}
	return 1;
}
