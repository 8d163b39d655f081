/*
 * knownhosts.h - checking a connected host's key against known_hosts.
 *
 * Private to controller/ssh/.  libssh's ssh_session_is_known_server()
 * decides (it reads hashed entries too).  Under accept-new an unknown key
 * is appended under an flock(2) on the file, after checking again under
 * the lock, so concurrent threads or processes add one line per host.
 * Every refusal says how to fix it (ssh-keyscan, ssh-keygen -R).
 */
#ifndef ENVCTL_CONTROLLER_SSH_KNOWNHOSTS_H
#define ENVCTL_CONTROLLER_SSH_KNOWNHOSTS_H

struct err;
struct host_conn;

/*
 * Checks c's host key (after the key exchange, before authentication) and
 * sets c->known_hosts.  EHOSTKEY (unknown, changed, unreadable entry),
 * ESYS (the file under accept-new), ETIMEOUT (waiting for its lock).
 */
int	knownhosts_check(struct host_conn *c, int accept_new,
	    struct err *err);

#endif
