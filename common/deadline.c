/* deadline.c - absolute deadlines (see deadline.h). */
#include "deadline.h"

#include <limits.h>
#include <time.h>

long long
deadline_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
deadline_left_ms(long long deadline, long long now)
{
	long long left = deadline - now;

	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

int
deadline_host_ms(long long remaining_ms)
{
	long long margin = remaining_ms / 5, share;

	if (margin < ENVCTL_DEADLINE_MARGIN_MS)
		margin = ENVCTL_DEADLINE_MARGIN_MS;
	share = (remaining_ms - margin) / 100 * 100;
	if (share < ENVCTL_DEADLINE_MIN_MS)
		return ENVCTL_DEADLINE_MIN_MS;
	return share > INT_MAX ? INT_MAX / 100 * 100 : (int)share;
}
