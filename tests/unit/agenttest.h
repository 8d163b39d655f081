/*
 * agenttest.h - helpers for the Check suites that run envctl-agent.
 *
 * The agent binary comes from $ENVCTL_AGENT (the Makefile sets it).  JSON
 * paths are dotted object keys ("target.mode"); the typed getters fail the
 * running test when the member is missing or of another type.  Returned
 * pointers are borrowed from the JSON value.
 */
#ifndef ENVCTL_TESTS_AGENTTEST_H
#define ENVCTL_TESTS_AGENTTEST_H

#include <jansson.h>
#include <sys/types.h>

/* $ENVCTL_AGENT, else build/envctl-agent. */
const char *agent_bin(void);
/*
 * For checked fixtures: copies the agent into a new temp directory as
 * AGENT_CACHED_NAME, the form of the upload cache's files, so that it
 * runs with that directory as its cache (agent/cache.h), and points
 * $ENVCTL_AGENT at the copy; agent_uncache() removes the directory.
 * agent_cache_dir() is that directory (NULL outside such a fixture).
 */
#define AGENT_CACHED_NAME "envctl-agent-" \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
void	 agent_cache(void);
void	 agent_uncache(void);
const char *agent_cache_dir(void);
/*
 * Starts the agent on two pipes, sends it req (a reference taken) and
 * returns its pid; *out reads its stdout, *in writes more requests (close
 * it to end the session).
 */
pid_t	 agent_start(json_t *req, int *in, int *out);
/*
 * Runs agent (NULL: agent_bin()) once on the one request req (taken), with
 * only PATH=/usr/bin:/bin and env (one more NAME=VALUE entry, or NULL) in
 * its environment; it must exit 0.  Returns its first reply.
 */
json_t	*agent_ask(const char *agent, const char *env, json_t *req);
/* CLOCK_MONOTONIC in milliseconds. */
long long now_ms(void);
/* The member at a dotted path, or NULL when any step is missing. */
json_t	*jget(const json_t *o, const char *path);
const char *jstr(const json_t *o, const char *path);
json_int_t jint(const json_t *o, const char *path);
int	 jbool(const json_t *o, const char *path);
void	 assert_null(const json_t *o, const char *path);
/* The reply has ok:true (else the test fails with its code and message). */
void	 assert_ok(const json_t *reply);
/* The reply has ok:false with exactly this code and message. */
void	 assert_fail(const json_t *reply, const char *code, const char *msg);
/* As assert_fail, for a message that starts with prefix. */
void	 assert_fail_prefix(const json_t *reply, const char *code,
	    const char *prefix);

#endif
