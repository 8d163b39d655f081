/*
 * cache.h - the agent's upload cache on a host, kept small.
 *
 * The controller uploads each agent version once per host, as
 * DIR/envctl-agent-SHA256 through a temp ".envctl-agent-SHA256.tmp-RANDOM"
 * (controller/agentlink.h), and reuses it.  cache_tidy(), called as a
 * session ends, keeps that directory from growing with every envctl
 * release, and only when this agent was started from such a file: it
 * marks its own file used (its mtime, at most once a day), then removes
 * the other versions not used for CACHE_KEEP_DAYS and temps older than a
 * day.  It touches only regular files of exactly those name forms that
 * belong to the owner of its own file (the cache's owner, also when root
 * runs a user's cache through sudo).  Best effort and silent.
 */
#ifndef ENVCTL_AGENT_CACHE_H
#define ENVCTL_AGENT_CACHE_H

#define CACHE_KEEP_DAYS	30

void	cache_tidy(void);

#endif
