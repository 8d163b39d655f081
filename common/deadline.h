/*
 * deadline.h - absolute deadlines on CLOCK_MONOTONIC, in milliseconds.
 *
 * A host job has one deadline, fixed when it starts and never moved by
 * progress; what runs on the host gets a shorter budget of its own, so
 * that the host reports its own failure before the controller gives up
 * on it.  Pure arithmetic except deadline_now_ms(); thread-safe.
 */
#ifndef ENVCTL_COMMON_DEADLINE_H
#define ENVCTL_COMMON_DEADLINE_H

/* The smallest budget handed to the host, ms. */
#define ENVCTL_DEADLINE_MIN_MS		100
/* The controller keeps max(ENVCTL_DEADLINE_MARGIN_MS, 1/5) for itself. */
#define ENVCTL_DEADLINE_MARGIN_MS	1000

/* CLOCK_MONOTONIC now, ms. */
long long	deadline_now_ms(void);
/* The ms left from now until deadline: 0 once it passed, at most INT_MAX. */
int		deadline_left_ms(long long deadline, long long now);
/*
 * The host's share of remaining_ms, what the agent may spend: remaining
 * less a margin of max(1 s, 20%) for the reply to travel back, rounded
 * down to 100 ms, at least ENVCTL_DEADLINE_MIN_MS.
 */
int		deadline_host_ms(long long remaining_ms);

#endif
