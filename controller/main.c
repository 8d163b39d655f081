/* main.c - envctl: global options and the table of commands. */
#include <stdio.h>

int
main(void)
{
	printf("envctl %s\n", ENVCTL_VERSION);
	return 0;
}
